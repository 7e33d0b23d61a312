"""The console's tests reuse distribution's archive with real bytes and its clients, and the
bulk jobs' small two-silo layout."""
import pytest

from tests.archive_fixtures import archived_collection, movers_without_waits, small_layout
from tests.distribution.conftest import (  # noqa: F401 - fixtures
    alice,
    archive_layout,
    archived,
    collection,
    inline,
    operator,
)


@pytest.fixture
def layout(data_root, settings):
    movers_without_waits(settings)
    primary, backup, media = small_layout()
    bulk_collection = archived_collection([primary, backup], short_name="MOD09GA",
                                          version="061")
    return bulk_collection, primary, backup, media
