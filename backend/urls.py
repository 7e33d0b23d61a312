"""URL map: the API under /api/v1/, its schema, the admin, Prometheus at /metrics, and the React
app everywhere else."""
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from backend.metrics.api import PrometheusView
from backend.views import health, spa

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/health/", health, name="health"),
    path("api/v1/", include("backend.accounts.urls")),
    path("api/v1/", include("backend.catalog.urls")),
    path("api/v1/", include("ingest.urls")),
    path("api/v1/", include("backend.archive.urls")),
    path("api/v1/", include("distribution.urls")),
    path("api/v1/", include("backend.metrics.urls")),
    path("api/v1/", include("backend.events.urls")),
    path("api/v1/console/", include("console.urls")),
    path("api/tape/v1/", include("distribution.tape_urls")),
    path(".well-known/", include("distribution.wellknown_urls")),
    path("api/v1/", include("demo.urls")),
    path("stac/", include("backend.catalog.stac_urls")),
    path("metrics", PrometheusView.as_view(), name="prometheus"),
    re_path(r"^(?!api/|admin/|static/|stac/|metrics$).*$", spa, name="spa"),
]

handler400 = "backend.views.bad_request"
handler404 = "backend.views.not_found"
handler500 = "backend.views.server_error"
