"""The one error type services raise when they refuse a request.

A refusal carries a sentence for the person who asked, the HTTP status that classifies it and,
when one field is at fault, that field's name. The API turns it into the JSON error body in one
place (`backend.api.exception_handler`) and the command line into its message in one place
(`backend.cli.Command`); views, tasks and commands never catch and re-wrap it. This module
imports nothing from Django so every layer, pure policy included, may raise it.
"""


def listed(items, sep=", ", cap=20):
    """`items` joined for a sentence: at most `cap` of them, then how many more (an order of
    100,000 unknown ids must not answer with all of them)."""
    items = [str(i) for i in items]
    head = sep.join(items[:cap])
    if len(items) <= cap:
        return head
    return f"{head} (and {len(items) - cap:,} more, {len(items):,} in all)"


class DomainError(Exception):
    """A request refused: `detail` says why, `status` classifies it, `field` names the culprit.

    `errors` holds every problem when a whole document is refused at once (an ingest request
    with several bad granules), so the caller can fix them all in one round. `headers` are
    sent with the answer where the protocol asks for them (a 416's Content-Range); `extra`
    are fields of the body a client reads besides the sentence (a 410's time of withdrawal).
    """

    status = 400

    def __init__(self, detail, field=None, *, status=None, errors=(), headers=None,
                 extra=None):
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.errors = list(errors)
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})
        if status is not None:
            self.status = status


class NotLoggedIn(DomainError):
    """The request needs a login (a session, or `Authorization: Token <key>`) it did not
    bring: a 401 that names the scheme, as HTTP asks."""

    status = 401

    def __init__(self, detail):
        super().__init__(detail, headers={"WWW-Authenticate": "Token"})


class Forbidden(DomainError):
    status = 403


class NotFound(DomainError):
    status = 404


class Conflict(DomainError):
    """The request is well formed but the thing is in the wrong state for it."""

    status = 409


class Gone(DomainError):
    status = 410


class TooLarge(DomainError):
    status = 413


class Unavailable(DomainError):
    status = 503
