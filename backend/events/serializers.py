"""Events as their CloudEvents documents; endpoints with their rules (a webhook's secret only
in the answer that made or rotated it); deliveries as the endpoint's log."""
from rest_framework import serializers

from .models import Delivery, Endpoint, Rule


class EventSerializer(serializers.Serializer):
    """A CloudEvents 1.0 document (structured mode) with Granary's row id."""

    seq = serializers.IntegerField(source="pk")
    specversion = serializers.CharField()
    id = serializers.CharField()
    source = serializers.CharField()
    type = serializers.CharField()
    subject = serializers.CharField(required=False)
    time = serializers.DateTimeField()
    datacontenttype = serializers.CharField()
    data = serializers.JSONField()

    def to_representation(self, instance):
        return {"seq": instance.pk, **instance.document()}


class RuleSerializer(serializers.ModelSerializer):
    type = serializers.CharField(max_length=64, help_text="an event type, '*' or 'granule.*'")
    collection_key = serializers.CharField(max_length=120, required=False, allow_blank=True)
    subject = serializers.CharField(max_length=200, required=False, allow_blank=True,
                                    help_text="e.g. subscriptions/12 or orders/7")

    class Meta:
        model = Rule
        fields = ["type", "collection_key", "subject"]


class EndpointSerializer(serializers.ModelSerializer):
    rules = RuleSerializer(many=True, required=False, max_length=50)
    kind = serializers.ChoiceField(choices=Endpoint.Kind.choices)
    url = serializers.CharField(max_length=500, required=False, allow_blank=True)
    name = serializers.CharField(max_length=100, required=False, allow_blank=True)
    enabled = serializers.BooleanField(required=False)
    delivered = serializers.IntegerField(read_only=True, required=False)
    pending = serializers.IntegerField(read_only=True, required=False)
    dead = serializers.IntegerField(read_only=True, required=False)

    class Meta:
        model = Endpoint
        fields = ["id", "kind", "name", "url", "enabled", "rules", "delivered", "pending",
                  "dead", "created_at"]
        read_only_fields = ["id", "created_at"]


class EndpointWithSecretSerializer(EndpointSerializer):
    secret = serializers.CharField(read_only=True, help_text="shown this once: keep it")

    class Meta(EndpointSerializer.Meta):
        fields = [*EndpointSerializer.Meta.fields, "secret"]


class EventDeliverySerializer(serializers.ModelSerializer):
    event_id = serializers.UUIDField(source="event.uid", read_only=True)
    event_type = serializers.CharField(source="event.type", read_only=True)
    subject = serializers.CharField(source="event.subject", read_only=True)
    event_time = serializers.DateTimeField(source="event.time", read_only=True)

    class Meta:
        model = Delivery
        fields = ["id", "endpoint", "event_id", "event_type", "subject", "event_time", "state",
                  "attempts", "due_at", "last_status", "last_error", "latency_ms",
                  "delivered_at"]
        read_only_fields = fields


class DeliveryReplaySerializer(serializers.Serializer):
    ids = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=2**62),
                                max_length=1000, required=False,
                                help_text="dead deliveries to send again (none: all of them)")


class DeliveryReplayedSerializer(serializers.Serializer):
    replayed = serializers.IntegerField()
    refused = serializers.ListField(child=serializers.ListField())


class EventTypeSerializer(serializers.Serializer):
    type = serializers.CharField()
    description = serializers.CharField()
    operators_only = serializers.BooleanField()


class RuleChoicesSerializer(serializers.Serializer):
    """What the caller's rules may ask for."""

    types = EventTypeSerializer(many=True)
    collections = serializers.ListField(
        child=serializers.CharField(),
        help_text="collections whose ingest events the caller may have (their providers')")
