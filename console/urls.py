"""The console's API under /api/v1/console/."""
from django.urls import include, path

import backend.ids  # noqa: F401 - registers the <id:...> path converter

from .granules_urls import urlpatterns as granules

urlpatterns = [
    *granules,
    path("", include("console.failures_urls")),
]
