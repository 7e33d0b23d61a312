"""The outbox (Event), where events go (Endpoint, with its Rules) and each attempt to take one
there (Delivery): the delivery log and the events' dead letters are these rows."""
import json
import uuid

from django.conf import settings
from django.db import models
from django.utils.functional import cached_property

from backend.accounts.ownership import Ownership

TYPE_PREFIX = "org.granary."


class Event(models.Model):
    """One change, as a CloudEvents 1.0 document: ids and links in `data`, never prose.
    It reaches its user (orders, subscriptions), its provider's members (ingest) and
    operators (every event)."""

    ownership = Ownership("user", also=("provider__members", "collection__providers__members"))

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    type = models.CharField(max_length=64, help_text="e.g. granule.archived")
    source = models.CharField(max_length=200)
    subject = models.CharField(max_length=200, blank=True)
    time = models.DateTimeField()
    data = models.JSONField(default=dict)
    collection = models.ForeignKey("catalog.Collection", null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    collection_key = models.CharField(max_length=120, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    provider = models.ForeignKey("accounts.Provider", null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")
    # set once the event's deliveries are written; the sweeper fans out what has none
    fanned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-pk"]
        indexes = [models.Index(fields=["time"], name="event_time"),
                   models.Index(fields=["type", "-id"], name="event_type"),
                   models.Index(fields=["fanned_at"], name="event_unfanned",
                                condition=models.Q(fanned_at__isnull=True))]

    def __str__(self):
        return f"{self.type} {self.subject} ({self.uid})"

    def document(self):
        """The CloudEvents 1.0 structured-mode JSON document."""
        doc = {"specversion": "1.0", "id": str(self.uid), "source": self.source,
               "type": TYPE_PREFIX + self.type, "time": self.time.isoformat(),
               "datacontenttype": "application/json", "data": self.data}
        if self.subject:
            doc["subject"] = self.subject
        return doc

    @cached_property
    def body(self):
        """The document as compact JSON bytes, rendered once per instance: the lanes share
        an event's instance among all its endpoints (events never change once written)."""
        return json.dumps(self.document(), separators=(",", ":")).encode()


class Endpoint(models.Model):
    """Somewhere a user's events go: a webhook URL, their mail, or an AMQP topic exchange."""

    ownership = Ownership("user")

    class Kind(models.TextChoices):
        WEBHOOK = "webhook", "Signed webhook"
        EMAIL = "email", "Email"
        AMQP = "amqp", "AMQP topic exchange"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="event_endpoints")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=100, blank=True)
    url = models.CharField(max_length=500, blank=True,
                           help_text="webhook: its https URL; amqp: the exchange name")
    secret = models.CharField(max_length=100, blank=True)
    previous_secret = models.CharField(max_length=100, blank=True)
    previous_until = models.DateTimeField(null=True, blank=True)
    enabled = models.BooleanField(default=True)
    # one lane per endpoint: the worker holding it delivers its events, in order
    lane_until = models.DateTimeField(null=True, blank=True)
    # the circuit: after a failed send, none of its deliveries is tried before this time
    retry_at = models.DateTimeField(null=True, blank=True)
    # its last sends took GRANARY_EVENTS_SLOW_S or more: its lane takes one of the few
    # GRANARY_EVENTS_SLOW_LANES places, never a place the others need
    slow = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self):
        return f"{self.kind} endpoint {self.pk} ({self.name or self.url})"


class Rule(models.Model):
    """Which events an endpoint gets: a type (or `*`, or a prefix `granule.*`), optionally
    narrowed to a collection or a subject (`subscriptions/12`, `orders/7`)."""

    ownership = Ownership("endpoint__user")

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="rules")
    type = models.CharField(max_length=64)
    collection_key = models.CharField(max_length=120, blank=True)
    subject = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["type"], name="rule_type")]

    def __str__(self):
        return f"{self.type} {self.collection_key} {self.subject}".strip()


class Delivery(models.Model):
    """One event to one endpoint: tried until delivered or out of tries (then DEAD, a dead
    letter an operator or the owner replays)."""

    ownership = Ownership("endpoint__user")

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        DEAD = "dead", "Dead: out of tries"

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    due_at = models.DateTimeField()
    last_status = models.IntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    latency_ms = models.FloatField(null=True, blank=True,
                                   help_text="from the event to its delivery")
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-pk"]
        constraints = [models.UniqueConstraint(fields=["event", "endpoint"],
                                               name="delivery_once")]
        indexes = [models.Index(fields=["endpoint", "state", "due_at"], name="delivery_lane")]

    def __str__(self):
        return f"event {self.event_id} to endpoint {self.endpoint_id} ({self.state})"
