from django.urls import path
from rest_framework.routers import DefaultRouter

from . import api

router = DefaultRouter(trailing_slash=True)
router.register("collections", api.CollectionViewSet, basename="collection")
router.register("granules", api.GranuleViewSet, basename="granule")

urlpatterns = [
    path("shapes/", api.ShapeUpload.as_view(), name="shape-upload"),
    *router.urls,
]
