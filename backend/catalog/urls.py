from rest_framework.routers import DefaultRouter

from . import api

router = DefaultRouter(trailing_slash=True)
router.register("collections", api.CollectionViewSet, basename="collection")
router.register("granules", api.GranuleViewSet, basename="granule")

urlpatterns = router.urls
