"""The WLCG Tape REST API v1 (wlcg-storage/wlcg-tape-rest-api) over Granary's recalls.

Thin views: the discovery document, stage, its status, cancel, delete, release and
archiveinfo. Every error answers in the spec's form, RFC 7807 problem+json. Clients sign in
with Granary's API token, sent as `Authorization: Bearer <token>` (what gfal2 sends) or
`Token <token>`. Paths are described in services/staging.py.
"""
import json
from http import HTTPStatus

from django.conf import settings
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.archive import services as archive
from backend.errors import DomainError, TooLarge

from .models import StageFile
from .services import staging, staging_progress

PROBLEM = "application/problem+json"


def _epoch(moment):
    return int(moment.timestamp()) if moment else None


class TapeView(APIView):
    """Base of the Tape REST API views: JSON in, JSON out, problems as problem+json."""

    schema = None
    permission_classes = [IsAuthenticated]   # the API's own credentials: bearer or session
    renderer_classes = [JSONRenderer]
    parser_classes = []

    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        detail = response.data.get("detail") if isinstance(response.data, dict) else None
        response.data = {"type": "about:blank", "title": HTTPStatus(response.status_code).phrase,
                         "status": response.status_code,
                         "detail": str(detail or HTTPStatus(response.status_code).description)}
        response.content_type = PROBLEM
        return response

    def document(self, request):
        """The JSON body, refused whole when too large or not JSON."""
        limit = settings.GRANARY_STAGE_MAX_BODY_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise DomainError("Content-Length is not a number.") from None
        if length > limit:
            raise TooLarge(f"The body has {length:,} bytes; the limit is {limit:,} "
                           "(GRANARY_STAGE_MAX_BODY_BYTES).")
        try:
            return json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            raise DomainError("The body is not a JSON document.") from None


class DiscoveryView(TapeView):
    """GET /.well-known/wlcg-tape-rest-api: where the API is and which version it speaks."""

    authentication_classes = []
    permission_classes = [AllowAny]

    def get(self, request):
        return Response({
            "sitename": settings.GRANARY_TAPE_SITENAME,
            "description": "Granary archive: bulk staging over its tape recall scheduler",
            "endpoints": [{"uri": request.build_absolute_uri("/api/tape/v1"),
                           "version": "v1", "metadata": {}}],
        })


class StageView(TapeView):
    def post(self, request):
        stage = staging.create_stage(request.user, self.document(request))
        location = request.build_absolute_uri(f"/api/tape/v1/stage/{stage.pk}")
        return Response({"requestId": str(stage.pk)}, status=201,
                        headers={"Location": location})


class StageRequestView(TapeView):
    def get(self, request, stage_id):
        stage = staging.get_stage(request.user, stage_id)
        files = []
        for f in stage.files.all().iterator(chunk_size=5000):
            row = {"path": f.path, "state": f.state, "onDisk": f.on_disk,
                   "startedAt": _epoch(f.started_at), "finishedAt": _epoch(f.finished_at)}
            if f.state == StageFile.State.FAILED:
                row["error"] = f.error
            elif f.state == StageFile.State.CANCELLED:
                # gfal2 reads onDisk before the state: only an error ends its wait
                row["error"] = "Cancelled: the file was not staged."
            files.append(row)
        # beyond the spec: the ETA and the bound by which every file is COMPLETED or FAILED
        eta = None if stage.completed_at else staging_progress.eta_s(stage.pk)
        return Response({"id": str(stage.pk), "createdAt": _epoch(stage.created_at),
                         "startedAt": _epoch(stage.started_at),
                         "completedAt": _epoch(stage.completed_at),
                         "etaS": eta, "boundAt": _epoch(stage.bound_at), "files": files})

    def delete(self, request, stage_id):
        staging.delete_stage(request.user, stage_id)
        return Response(status=200)


class CancelView(TapeView):
    def post(self, request, stage_id):
        staging.cancel_files(request.user, stage_id, self.document(request))
        return Response(status=200)


class ReleaseView(TapeView):
    def post(self, request, stage_id):
        staging.release_files(request.user, stage_id, self.document(request))
        return Response(status=200)


class ArchiveInfoView(TapeView):
    def post(self, request):
        paths = staging.paths_of(self.document(request))
        found = staging.resolve_paths(request.user, paths)
        where = archive.localities(found.values())
        return Response([
            {"path": p, "locality": where[found[p]]} if p in found
            else {"path": p, "error": "No such file or directory"} for p in paths])
