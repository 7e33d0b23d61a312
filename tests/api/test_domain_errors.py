"""One error type, answered in one place: a service's refusal reaches an API client as JSON with
its status, and a command-line user as the command's error message."""
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.response import Response

from backend import errors
from backend.api import exception_handler
from backend.cli import Command


@pytest.mark.parametrize("kind, status", [
    (errors.DomainError, 400), (errors.Forbidden, 403), (errors.NotFound, 404),
    (errors.Conflict, 409), (errors.Gone, 410), (errors.TooLarge, 413),
    (errors.Unavailable, 503),
])
def test_each_refusal_answers_with_its_http_status(kind, status):
    response = exception_handler(kind("That cannot be done."), {})
    assert isinstance(response, Response)
    assert (response.status_code, response.data) == (status, {"detail": "That cannot be done."})


def test_a_status_given_with_the_error_overrides_its_kind():
    response = exception_handler(errors.DomainError("Slow down.", status=429), {})
    assert response.status_code == 429


def test_a_field_error_reads_as_drf_field_errors_do():
    response = exception_handler(errors.DomainError("Name at least one granule.", "granules"), {})
    assert response.status_code == 400
    assert response.data == {"detail": "granules: Name at least one granule.",
                             "errors": {"granules": ["Name at least one granule."]}}


def test_a_whole_document_refused_lists_every_problem():
    problems = [{"granule": 0, "error": "no files"}, {"granule": 3, "error": "bad checksum"}]
    response = exception_handler(errors.DomainError("2 granules are malformed.",
                                                    errors=problems), {})
    assert response.data == {"detail": "2 granules are malformed.", "errors": problems}


def test_headers_the_protocol_asks_for_go_with_the_answer():
    response = exception_handler(errors.DomainError("Range not satisfiable.", status=416,
                                                    headers={"Content-Range": "bytes */10"}), {})
    assert (response.status_code, response["Content-Range"]) == (416, "bytes */10")


def test_other_exceptions_are_left_to_drf_and_django():
    assert exception_handler(KeyError("x"), {}) is None


class _Refusing(Command):
    def handle(self, *args, **options):
        raise errors.Conflict("Volume V00001 is mounted; dismount it first.")


def test_a_command_reports_a_refusal_as_its_error_message():
    with pytest.raises(CommandError, match=r"^Volume V00001 is mounted; dismount it first\.$"):
        call_command(_Refusing())
