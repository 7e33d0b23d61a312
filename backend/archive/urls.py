from django.urls import path
from rest_framework.routers import DefaultRouter

import backend.ids  # noqa: F401 - registers the <id:...> path converter

from . import api, config_api

router = DefaultRouter()
router.register("archive/silos", api.SiloViewSet, basename="silo")
router.register("archive/volumes", api.VolumeViewSet, basename="volume")
router.register("archive/drives", api.DriveViewSet, basename="drive")
router.register("archive/buckets", api.BucketViewSet, basename="bucket")
router.register("archive/requests", api.RequestViewSet, basename="archive-request")
router.register("archive/reconciliation", api.ReconciliationViewSet, basename="reconciliation")

urlpatterns = [
    path("archive/volume-groups/", api.VolumeGroupView.as_view(), name="volume-groups"),
    path("archive/files/<id:file_id>/", api.FileStatusView.as_view(), name="file-status"),
    path("archive/cache/", api.CacheView.as_view(), name="cache"),
    path("archive/queues/", api.QueueSummaryView.as_view(), name="archive-queues"),
    path("archive/cache/pin/", api.PinView.as_view(), name="cache-pin"),
    path("archive/cache/release/", api.ReleaseView.as_view(), name="cache-release"),
    path("config/collections/", config_api.CollectionConfigListView.as_view(),
         name="config-collection-list"),
    path("config/collections/<str:key>/", config_api.CollectionConfigDetailView.as_view(),
         name="config-collection-detail"),
    path("config/recall-shares/", config_api.RecallSharesView.as_view(),
         name="config-recall-shares"),
    *router.urls,
]
