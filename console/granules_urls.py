"""/api/v1/console/granules/...: the operator's granule list, page and lifecycle."""
from django.urls import path

from . import granules_api as api

urlpatterns = [
    path("granules/", api.ConsoleGranulesView.as_view(), name="console-granule-list"),
    path("granules/counts/", api.ConsoleGranuleCountsView.as_view(),
         name="console-granule-counts"),
    path("granules/ingest-failures/", api.ConsoleIngestFailuresView.as_view(),
         name="console-ingest-failures"),
    path("granules/<id:pk>/redeliver/", api.RedeliverView.as_view(),
         name="console-granule-redeliver"),
    path("granules/<id:pk>/", api.ConsoleGranuleView.as_view(), name="console-granule-detail"),
    path("granules/<id:pk>/withdraw/", api.WithdrawView.as_view(),
         name="console-granule-withdraw"),
    path("granules/<id:pk>/restore/", api.RestoreView.as_view(), name="console-granule-restore"),
    path("granules/<id:pk>/delete/", api.DeleteView.as_view(), name="console-granule-delete"),
]
