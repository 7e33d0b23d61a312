"""Fan-out: an event's deliveries, one per enabled endpoint whose rule matches and whose owner
may see the event (the ownership rule), written once; then each endpoint's lane is woken."""
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from backend import leases
from backend.accounts import roles
from backend.accounts.ownership import owned

from ..models import Delivery, Endpoint, Event, Rule
from .lanes import wake

FAN_OUT_LOCK = 33035   # advisory lock (class, 0): one fan-out at a time, oldest events first
CHUNK = 5000

# what a user's mail tells them of (what Granary always mailed), unless they opt out
MAILED = ("order.ready", "order.partially_ready", "order.part_ready", "order.failed",
          "order.delivered", "order.expiring", "subscription.matched")


def matches(rule, event):
    kind = rule.type
    if kind != "*" and kind != event.type and not (
            kind.endswith(".*") and event.type.startswith(kind[:-1])):
        return False
    if rule.collection_key and rule.collection_key != event.collection_key:
        return False
    return not rule.subject or rule.subject == event.subject


def fan_out(event_ids):
    """Write the deliveries of the events not fanned out yet; wake the lanes. Idempotent.

    One fan-out at a time, and each also takes every older event still waiting: a lane sends
    oldest event first, so no endpoint is sent an event before an older one already
    committed (a granule's archived before its withdrawn), even when their nudges reach two
    workers in the other order."""
    if not event_ids:
        return 0
    top, made = max(event_ids), 0
    while True:
        with transaction.atomic():
            leases.one_at_a_time(FAN_OUT_LOCK)
            events = list(Event.objects.filter(pk__lte=top, fanned_at__isnull=True)
                          .order_by("pk")[:CHUNK])
            if not events:
                return made
            made += _fan(events)
        if len(events) < CHUNK:
            return made


def _fan(events):
    _default_mail([e for e in events if e.user_id and e.type in MAILED])
    rules = list(Rule.objects.filter(endpoint__enabled=True).select_related("endpoint__user"))
    roles.prime([r.endpoint.user for r in rules])   # not a query per endpoint's owner
    sees = _visibility([e.pk for e in events], {r.endpoint.user for r in rules})
    rows, lanes = [], set()
    now = timezone.now()
    for ev in events:
        targets = {r.endpoint_id for r in rules
                   if matches(r, ev) and ev.pk in sees(r.endpoint.user)}
        rows += [Delivery(event=ev, endpoint_id=t, due_at=now) for t in sorted(targets)]
        lanes |= targets
    Delivery.objects.bulk_create(rows, ignore_conflicts=True, batch_size=2000)
    Event.objects.filter(pk__in=[e.pk for e in events]).update(fanned_at=now)
    # once committed, only the lanes nobody holds are woken (a holder looks for more as it
    # hands its lane back): not a message per endpoint per batch
    transaction.on_commit(lambda: wake(sorted(lanes)))
    return len(rows)


def _visibility(event_ids, users):
    """user -> the ids among `event_ids` they may see (operators all), asked once per user."""
    cache = {}

    def sees(user):
        if user.pk not in cache:
            if roles.is_operator(user):
                cache[user.pk] = set(event_ids)
            else:
                cache[user.pk] = set(owned(Event.objects.filter(pk__in=event_ids), user)
                                     .values_list("pk", flat=True))
        return cache[user.pk]
    return sees


def _default_mail(events):
    """A user who never chose gets their order and subscription events by mail (what Granary
    always did): their email endpoint is made the first time one concerns them."""
    ids = {e.user_id for e in events}
    have = set(Endpoint.objects.filter(user__in=ids, kind=Endpoint.Kind.EMAIL)
               .values_list("user_id", flat=True))
    for user in get_user_model().objects.filter(pk__in=ids - have).exclude(email="")\
            .order_by("pk"):
        endpoint = Endpoint.objects.create(user=user, kind=Endpoint.Kind.EMAIL, name="My mail")
        Rule.objects.bulk_create([Rule(endpoint=endpoint, type=t) for t in MAILED])


def fan_out_missed(limit=CHUNK):
    """The sweeper's half: events whose nudge was lost."""
    ids = list(Event.objects.filter(fanned_at__isnull=True).order_by("pk")
               .values_list("pk", flat=True)[:limit])
    return fan_out(ids)
