"""The few views that are not an app's API: the React shell and a health probe."""
import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.http import HttpResponse, JsonResponse
from django.views import defaults
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts import roles
from backend.api import FirstRenderer
from backend.metrics.services import queue_health

_MISSING_BUILD = (
    "<!doctype html><title>Granary</title><h1>Granary</h1>"
    "<p>The web app has not been built. Run <code>npm run build</code> "
    "(or <code>make setup</code>) and reload. "
    "The API is at <a href='/api/docs/'>/api/docs/</a>.</p>"
)


@ensure_csrf_cookie
def spa(request):
    """Serve the built React app; client-side routing handles the path."""
    index = settings.FRONTEND_DIST / "index.html"
    if not index.exists():
        return HttpResponse(_MISSING_BUILD, status=503)
    return HttpResponse(index.read_text(encoding="utf-8"))


class Health(APIView):
    """The probe a load balancer asks (200 while the database answers); operators, by session
    or token, also see the database and each worker queue (host names are not for everyone)."""

    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = FirstRenderer

    @extend_schema(exclude=True)
    def get(self, request):
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        if not roles.is_operator(request.user):
            return Response({"status": "ok"})
        return Response({"status": "ok", "database": connection.vendor,
                         "queues": queue_health()})


health = Health.as_view()


def _api(request):
    return request.path.startswith(("/api/", "/stac/"))


def bad_request(request, exception=None):
    """The API answers JSON even where Django, not DRF, refuses the request."""
    if _api(request):
        return JsonResponse({"detail": "Bad request."}, status=400)
    return defaults.bad_request(request, exception)


def not_found(request, exception=None):
    """A path no route matches (a non-numeric id: /api/v1/orders/abc/) is a JSON 404 under the
    API, the HTML page elsewhere."""
    if _api(request):
        return JsonResponse({"detail": f"No API endpoint at {request.path}."}, status=404)
    return defaults.page_not_found(request, exception)


DATABASE_AWAY_S = 5   # how long a client is asked to wait while the database is away


def server_error(request):
    """An unhandled error. The database being unreachable (a restart, a failover) is not the
    client's fault nor a bug: 503 with Retry-After, so clients wait and ask again; the chaos
    run met 500s here while it restarted PostgreSQL."""
    exc = sys.exc_info()[1]
    if isinstance(exc, OperationalError | InterfaceError):
        response = JsonResponse({"detail": "The archive's database is unavailable for a moment; "
                                 f"try again in {DATABASE_AWAY_S} seconds."}, status=503)
        response["Retry-After"] = str(DATABASE_AWAY_S)
        return response
    if _api(request):
        return JsonResponse({"detail": "Internal error; it has been logged."}, status=500)
    return defaults.server_error(request)
