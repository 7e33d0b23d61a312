"""The console's tests reuse distribution's archive with real bytes and its clients."""
from tests.distribution.conftest import (  # noqa: F401 - fixtures
    alice,
    archive_layout,
    archived,
    collection,
    inline,
    operator,
)
