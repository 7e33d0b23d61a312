from django.urls import path, re_path

from . import api

urlpatterns = [
    path("ingest/requests/", api.RequestListView.as_view(), name="ingest-request-list"),
    path("ingest/requests/<int:pk>/", api.RequestDetailView.as_view(),
         name="ingest-request-detail"),
    path("ingest/requests/<int:pk>/retry/", api.RetryView.as_view(), name="ingest-request-retry"),
    path("ingest/pdrs/", api.PdrListView.as_view(), name="ingest-pdr-list"),
    path("ingest/pdrs/<int:pk>/", api.PdrDetailView.as_view(), name="ingest-pdr-detail"),
    re_path(r"^ingest/uploads/(?P<path>.+)$", api.UploadView.as_view(), name="ingest-upload"),
]
