"""API-wide behaviour: every error is JSON with a human sentence in `detail`."""
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
from rest_framework.views import exception_handler as drf_exception_handler


class Conflict(exceptions.APIException):
    """The request is fine but the thing is in the wrong state for it (409)."""

    status_code = 409
    default_detail = "That cannot be done in the current state."
    default_code = "conflict"


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


def exception_handler(exc, context):
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
