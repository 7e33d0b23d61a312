"""The STAC API under /stac/ (namespace "stac"). Paths have no trailing slash, as STAC
clients expect; anything else under /stac/ is a JSON 404."""
from django.urls import path, re_path

from . import stac_api

app_name = "stac"

urlpatterns = [
    path("", stac_api.LandingPage.as_view(), name="landing"),
    path("conformance", stac_api.Conformance.as_view(), name="conformance"),
    path("collections", stac_api.Collections.as_view(), name="collections"),
    path("collections/<str:key>", stac_api.CollectionDetail.as_view(), name="collection"),
    path("collections/<str:key>/items", stac_api.CollectionItems.as_view(), name="items"),
    path("collections/<str:key>/items/<str:item_id>", stac_api.ItemDetail.as_view(),
         name="item"),
    path("search", stac_api.Search.as_view(), name="search"),
    re_path(r"^.*$", stac_api.Unknown.as_view(), name="unknown"),
]
