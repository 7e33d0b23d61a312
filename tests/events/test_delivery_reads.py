"""What a worker does per event: an event going to many endpoints is read and its body
rendered once, not once per lane; an event it keeps is known by its uid, never by its id alone
(SQLite gives a rolled-back id to the next event)."""
import uuid

import pytest

from backend import nudges
from backend.events import services as events
from backend.events.models import Delivery, Event
from tests.events.receiver import Receiver, free_ports
from tests.factories import CollectionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _quiet(monkeypatch, settings):
    settings.GRANARY_EVENTS_ALLOWED_NETS = ["127.0.0.1/32"]
    monkeypatch.setattr(nudges, "send", lambda *args, **kw: True)


def _hooks(n):
    """n webhooks, each with its receiver."""
    operator = UserFactory(role="operator")
    hooks = [(events.create(operator, "webhook", f"http://127.0.0.1:{port}/h", f"hook {port}",
                            [{"type": "granule.archived"}]), port) for port in free_ports(n)]
    return [(hook, Receiver(port, hook.secret)) for hook, port in hooks]


def _emit(collection, n):
    rows = events.emit_many([events.event("granule.archived", f"granules/{i}", {"granule": i},
                                          collection=collection) for i in range(n)])
    events.fan_out([r.pk for r in rows])
    return rows


def test_an_event_to_many_endpoints_is_rendered_once_and_each_gets_it_signed(monkeypatch):
    hooks, collection = _hooks(3), CollectionFactory()
    rows = _emit(collection, 2)
    rendered = []
    document = Event.document
    monkeypatch.setattr(Event, "document", lambda self: rendered.append(self.uid) or
                        document(self))
    for hook, receiver in hooks:
        with receiver:
            assert events.deliver(hook.pk) == 2
    assert sorted(rendered) == sorted(r.uid for r in rows)
    for _, receiver in hooks:
        assert set(receiver.ids) == {str(r.uid) for r in rows} and not receiver.bad


def test_a_kept_event_is_never_sent_for_another_event_with_its_id():
    ((hook, receiver),), collection = _hooks(1), CollectionFactory()
    (first,) = _emit(collection, 1)
    with receiver:
        assert events.deliver(hook.pk) == 1
        # the same id now names another event (as after a rollback on SQLite)
        other = uuid.uuid4()
        Event.objects.filter(pk=first.pk).update(uid=other, data={"granule": 99})
        Delivery.objects.filter(endpoint=hook).update(state=Delivery.State.PENDING)
        assert events.deliver(hook.pk) == 1
    assert receiver.ids == {str(first.uid): 1, str(other): 1} and not receiver.bad
