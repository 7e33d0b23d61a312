"""The console's API under /api/v1/console/."""
from django.urls import include, path
from rest_framework.routers import SimpleRouter

import backend.ids  # noqa: F401 - registers the <id:...> path converter

from .bulk_api import BulkJobViewSet
from .granules_urls import urlpatterns as granules

bulk = SimpleRouter()
bulk.register("bulk", BulkJobViewSet, basename="bulk-job")

urlpatterns = [
    *granules,
    *bulk.urls,
    path("", include("console.failures_urls")),
]
