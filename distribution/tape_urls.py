"""The Tape REST API's routes (mounted at api/tape/v1/ by backend.urls), as the spec writes
them, a trailing slash allowed (gfal2 2.21 posts to archiveinfo/)."""
from django.urls import re_path

from . import tape_api

ID = r"(?P<stage_id>[^/]+)"

urlpatterns = [
    re_path(r"^stage/?$", tape_api.StageView.as_view(), name="tape-stage"),
    re_path(rf"^stage/{ID}/?$", tape_api.StageRequestView.as_view(), name="tape-stage-request"),
    re_path(rf"^stage/{ID}/cancel/?$", tape_api.CancelView.as_view(), name="tape-cancel"),
    re_path(rf"^release/{ID}/?$", tape_api.ReleaseView.as_view(), name="tape-release"),
    re_path(r"^archiveinfo/?$", tape_api.ArchiveInfoView.as_view(), name="tape-archiveinfo"),
]
