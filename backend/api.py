"""API-wide behaviour: every error is JSON with a human sentence in `detail`."""
from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError
from rest_framework import exceptions
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from backend.errors import DomainError


def _sentence(data):
    """Flatten DRF's error structure into one readable line."""
    if isinstance(data, dict):
        parts = []
        for key, value in data.items():
            text = _sentence(value)
            parts.append(text if key in ("detail", "non_field_errors") else f"{key}: {text}")
        return "; ".join(parts)
    if isinstance(data, list):
        return " ".join(_sentence(v) for v in data)
    return str(data)


def domain_error_body(exc):
    """The JSON body of a service's refusal: a field's error reads as DRF's field errors do."""
    if exc.field:
        return {"detail": f"{exc.field}: {exc.detail}", "errors": {exc.field: [exc.detail]}}
    if exc.errors:
        return {"detail": exc.detail, "errors": exc.errors}
    return {**exc.extra, "detail": exc.detail}


def exception_handler(exc, context):
    """Every error the API answers is JSON; a DomainError keeps its own status and sentence."""
    if isinstance(exc, DomainError):
        return Response(domain_error_body(exc), status=exc.status, headers=exc.headers)
    if isinstance(exc, RequestDataTooBig):
        return Response({"detail": "The request body is larger than "
                         f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."}, status=413)
    if isinstance(exc, SuspiciousOperation):  # too many form fields, a malformed header, ...
        return Response({"detail": str(exc) or "Bad request."}, status=400)
    if isinstance(exc, DataError):
        # A value the database cannot hold or compare: a NUL character (PostgreSQL text takes
        # none), a time-zone offset or a number beyond its range. SQLite takes what PostgreSQL
        # refuses, so no field check stands in for this one answer.
        reason = str(exc).splitlines()[0] if str(exc) else "a value is out of range"
        return Response({"detail": f"A value in the request cannot be used: {reason}."},
                        status=400)
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        exc = exceptions.ValidationError(detail)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(data, dict) and set(data) == {"detail"}:
        return response
    response.data = {"detail": _sentence(data), "errors": data}
    return response


class FirstRenderer(BaseContentNegotiation):
    """The view's first renderer whatever Accept says: for endpoints with one answer format
    (STAC's JSON, Prometheus' text), where a 406 would only hide a working answer."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
