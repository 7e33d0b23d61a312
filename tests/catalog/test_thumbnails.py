"""Search results carry the browse image (thumbnail) of each granule that has one, in the same
few queries however many granules a page holds."""
import pytest
from django.urls import reverse

from backend.catalog.models import File
from tests.factories import CollectionFactory, FileFactory, GranuleFactory

pytestmark = pytest.mark.django_db


def test_results_link_the_browse_image_of_granules_with_one(api, django_assert_max_num_queries):
    collection = CollectionFactory()
    with_browse, without = [], []
    for n in range(12):
        granule = GranuleFactory(collection=collection)
        FileFactory(granule=granule, name=f"g{n}.hdf")
        if n % 3:
            browse = FileFactory(granule=granule, name=f"g{n}.jpg", role=File.Role.BROWSE)
            with_browse.append((granule.pk, browse.pk))
        else:
            FileFactory(granule=granule, name=f"g{n}.met", role=File.Role.METADATA)
            without.append(granule.pk)
    with django_assert_max_num_queries(6):
        body = api.get("/api/v1/granules/?limit=20").json()
    urls = {g["id"]: g["browse_url"] for g in body["results"]}
    assert {pk: urls[pk] for pk, _ in with_browse} == {
        pk: reverse("file-download", args=[file]) for pk, file in with_browse}
    assert all(urls[pk] is None for pk in without)
