"""The console's API under /api/v1/console/."""
from django.urls import include, path

urlpatterns = [
    path("", include("console.failures_urls")),
]
