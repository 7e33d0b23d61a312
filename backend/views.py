"""The few views that are not an app's API: the React shell and a health probe."""
from django.conf import settings
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import ensure_csrf_cookie

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


def health(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse(
        {"status": "ok", "database": connection.vendor, "queues": queue_health()}
    )
