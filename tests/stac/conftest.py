"""Shared STAC test data: two public collections and a restricted one."""
import pytest

from backend.catalog.models import Collection
from tests.factories import CollectionFactory


@pytest.fixture
def modis(db):
    return CollectionFactory(short_name="MOD021KM", version="061", title="MODIS L1B 1km",
                             description="Calibrated radiances", platform="Terra")


@pytest.fixture
def airs(db):
    return CollectionFactory(short_name="AIRS2RET", version="7.0", title="AIRS L2",
                             platform="Aqua", instrument="AIRS")


@pytest.fixture
def secret(db):
    return CollectionFactory(short_name="SECRET", version="1", access=Collection.Access.RESTRICTED)
