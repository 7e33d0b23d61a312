"""The console's API under /api/v1/console/."""
from rest_framework.routers import SimpleRouter

from .bulk_api import BulkJobViewSet

bulk = SimpleRouter()
bulk.register("bulk", BulkJobViewSet, basename="bulk-job")

urlpatterns = [*bulk.urls]
