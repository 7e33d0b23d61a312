from django.urls import path, re_path

import backend.ids  # noqa: F401 - registers the <id:...> path converter

from . import api

urlpatterns = [
    path("ingest/requests/", api.RequestListView.as_view(), name="ingest-request-list"),
    path("ingest/requests/<id:pk>/", api.RequestDetailView.as_view(),
         name="ingest-request-detail"),
    path("ingest/requests/<id:pk>/retry/", api.RetryView.as_view(), name="ingest-request-retry"),
    path("ingest/pdrs/", api.PdrListView.as_view(), name="ingest-pdr-list"),
    path("ingest/pdrs/<id:pk>/", api.PdrDetailView.as_view(), name="ingest-pdr-detail"),
    re_path(r"^ingest/uploads/(?P<path>.+)$", api.UploadView.as_view(), name="ingest-upload"),
]
