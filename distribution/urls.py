from django.urls import path
from rest_framework.routers import DefaultRouter

import backend.ids  # noqa: F401 - registers the <id:...> path converter

from . import api, stage_api

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("orders", api.OrderViewSet, basename="order")
router.register("destinations", api.DestinationViewSet, basename="destination")
router.register("subscriptions", api.SubscriptionViewSet, basename="subscription")
router.register("stage-requests", stage_api.StageRequestViewSet, basename="stage-request")

urlpatterns = [
    path("cart/", api.CartView.as_view(), name="cart"),
    path("cart/matching/", api.CartMatchingView.as_view(), name="cart-matching"),
    path("cart/subset/", api.CartSubsetView.as_view(), name="cart-subset"),
    path("cart/<id:granule>/", api.CartGranuleView.as_view(), name="cart-granule"),
    path("files/<id:file_id>/download", api.DownloadView.as_view(), name="file-download"),
    path("granary-get", api.GranaryGetView.as_view(), name="granary-get"),
    *router.urls,
]
