"""Channels: one seam, `send(endpoint, event)`, one implementation per kind of endpoint. A
channel returns the answer's status (None when there is none) or raises Undelivered."""
from . import amqp, email, webhook


class Undelivered(Exception):
    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


CHANNELS = {"webhook": webhook.send, "email": email.send, "amqp": amqp.send}


def send(endpoint, event):
    try:
        return CHANNELS[endpoint.kind](endpoint, event)
    except Undelivered:
        raise
    except Exception as exc:  # noqa: BLE001 - any channel's failure is a failed attempt
        raise Undelivered(f"{type(exc).__name__}: {exc}"[:500],
                          getattr(exc, "status", None)) from exc
