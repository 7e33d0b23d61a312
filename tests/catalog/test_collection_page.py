"""A collection's page: abstract (description), DOI, citation, level, variables, granule count
and its extent, declared by the provider or, where it declares none, what its archived
granules cover (computed here in Python from the granules made)."""
from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError

from backend.catalog.models import Collection, Granule
from demo.definitions import DEMO_COLLECTIONS
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db


def page(api, key):
    response = api.get(f"/api/v1/collections/{key}/")
    assert response.status_code == 200, response.content
    return response.json()


def when(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def test_demo_collections_are_valid_and_show_their_declarations(operator_api):
    for spec in DEMO_COLLECTIONS:
        collection = Collection(**spec)
        collection.full_clean()
        collection.save()
    body = page(operator_api, "GHRSST_OISST_L4.2.1")
    assert body["doi"] == "10.5067/GHAAO-4BC21"
    assert body["doi_url"] == "https://doi.org/10.5067/GHAAO-4BC21"
    assert "GHRSST Level 4 AVHRR_OI" in body["citation"]
    assert body["processing_level"] == "4"
    assert {"name": "analysed_sst", "units": "kelvin",
            "long_name": "analysed sea surface temperature"} in body["variables"]
    assert body["spatial_extent"] == {"bbox": [-180.0, -90.0, 180.0, 90.0], "source": "declared"}
    temporal = body["temporal_extent"]
    assert (when(temporal["start"]), temporal["end"], temporal["source"]) == (
        datetime(1981, 9, 1, tzinfo=UTC), None, "declared")
    # AIRS NRT declares no coverage and has no granules yet
    airs = page(operator_api, "AIRS2RET_NRT.7.0")
    assert airs["doi"] == "" and airs["doi_url"] is None
    assert airs["spatial_extent"] == {"bbox": None, "source": "none"}
    assert airs["temporal_extent"] == {"start": None, "end": None, "source": "none"}


def test_undeclared_extent_is_what_the_archived_granules_cover(api):
    collection = CollectionFactory(short_name="MOD021KM", version="061")
    base = datetime(2024, 3, 1, tzinfo=UTC)
    boxes = [(-20, -5, 10, 15), (30, -40, 50, -10), (5, 60, 25, 70)]
    made = []
    for n, (w, s, e, north) in enumerate(boxes):
        made.append(GranuleFactory(collection=collection, west=w, south=s, east=e, north=north,
                                   temporal_start=base + timedelta(days=n),
                                   temporal_end=base + timedelta(days=n, hours=3)))
    GranuleFactory(collection=collection, state=Granule.State.ARCHIVING, west=-170, south=-80,
                   east=170, north=80, temporal_start=base - timedelta(days=9),
                   temporal_end=base + timedelta(days=99))
    body = page(api, "MOD021KM.061")
    assert body["granule_count"] == len(made)
    assert body["spatial_extent"] == {
        "bbox": [min(b[0] for b in boxes), min(b[1] for b in boxes),
                 max(b[2] for b in boxes), max(b[3] for b in boxes)],
        "source": "granules"}
    temporal = body["temporal_extent"]
    assert (when(temporal["start"]), when(temporal["end"]), temporal["source"]) == (
        min(g.temporal_start for g in made), max(g.temporal_end for g in made), "granules")


def test_a_crossing_of_180_degrees_widens_the_computed_box_to_every_longitude(api):
    collection = CollectionFactory(short_name="MOD021KM", version="061")
    GranuleFactory(collection=collection, west=170, south=-5, east=-170, north=5)
    GranuleFactory(collection=collection, west=0, south=10, east=1, north=20)
    assert page(api, "MOD021KM.061")["spatial_extent"]["bbox"] == [-180.0, -5.0, 180.0, 20.0]


def test_declared_time_with_computed_space(api):
    collection = CollectionFactory(short_name="MOD021KM", version="061",
                                   extent_start=datetime(2000, 2, 24, tzinfo=UTC))
    GranuleFactory(collection=collection, west=1, south=2, east=3, north=4)
    body = page(api, "MOD021KM.061")
    assert body["spatial_extent"] == {"bbox": [1.0, 2.0, 3.0, 4.0], "source": "granules"}
    assert body["temporal_extent"]["source"] == "declared"
    assert body["temporal_extent"]["end"] is None


@pytest.mark.parametrize("variables", [
    "sst", [{"name": "sst"}], [{"name": "sst", "units": 1, "long_name": "x"}],
    [{"name": "sst", "units": "K", "long_name": "x", "extra": "y"}], {"name": "sst"},
])
def test_malformed_variables_are_refused(variables):
    collection = CollectionFactory.build(variables=variables)
    with pytest.raises(ValidationError, match="variables must be a list"):
        collection.full_clean()


def test_the_list_stays_lean(api):
    CollectionFactory(short_name="MOD021KM", version="061")
    row = api.get("/api/v1/collections/").json()["results"][0]
    assert "spatial_extent" not in row and "variables" not in row
