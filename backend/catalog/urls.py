from django.urls import path
from rest_framework.routers import DefaultRouter

from . import api, completeness_api

router = DefaultRouter(trailing_slash=True)
router.register("collections", api.CollectionViewSet, basename="collection")
router.register("granules", api.GranuleViewSet, basename="granule")

urlpatterns = [
    path("shapes/", api.ShapeUpload.as_view(), name="shape-upload"),
    path("completeness/", completeness_api.CompletenessView.as_view(), name="completeness"),
    path("completeness/worst/", completeness_api.WorstView.as_view(),
         name="completeness-worst"),
    *router.urls,
]
