"""The Tape REST API's routes (mounted at api/tape/v1/ by backend.urls), without trailing
slashes as the spec writes them."""
from django.urls import path

from . import tape_api

urlpatterns = [
    path("stage", tape_api.StageView.as_view(), name="tape-stage"),
    path("stage/<str:stage_id>", tape_api.StageRequestView.as_view(), name="tape-stage-request"),
    path("stage/<str:stage_id>/cancel", tape_api.CancelView.as_view(), name="tape-cancel"),
    path("release/<str:stage_id>", tape_api.ReleaseView.as_view(), name="tape-release"),
    path("archiveinfo", tape_api.ArchiveInfoView.as_view(), name="tape-archiveinfo"),
]
