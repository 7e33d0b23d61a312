"""Fixtures of the console's tests."""
import pytest

from tests.archive_fixtures import archived_collection, movers_without_waits, small_layout


@pytest.fixture
def layout(data_root, settings):
    movers_without_waits(settings)
    primary, backup, media = small_layout()
    collection = archived_collection([primary, backup], short_name="MOD09GA", version="061")
    return collection, primary, backup, media
