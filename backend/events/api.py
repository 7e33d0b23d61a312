"""The events API: events each caller may see (the ownership rule), their endpoints with
rules, each endpoint's delivery log, a test event, secret rotation and dead-letter replay."""
from django.db.models import Count, Q
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from backend.accounts.ownership import OwnedViewMixin
from backend.errors import DomainError
from backend.ids import ID_REGEX

from . import services
from .models import Delivery, Endpoint, Event
from .serializers import (
    DeliveryReplayedSerializer,
    DeliveryReplaySerializer,
    EndpointSerializer,
    EndpointWithSecretSerializer,
    EventDeliverySerializer,
    EventSerializer,
    RuleChoicesSerializer,
)

LOG_ROWS = 200


class EventViewSet(OwnedViewMixin, viewsets.ReadOnlyModelViewSet):
    """Events, newest first: a user's orders and subscriptions, a provider's collections and
    ingest, every event for operators. Filters: type (exact or `granule.*`), subject."""

    permission_classes = [IsAuthenticated]
    serializer_class = EventSerializer
    lookup_value_regex = ID_REGEX
    queryset = Event.objects.none()
    noun = "event"

    def owned_queryset(self):
        return Event.objects.all()

    def get_queryset(self):
        rows = super().get_queryset()
        if getattr(self, "swagger_fake_view", False):
            return rows
        kind = self.request.query_params.get("type", "")[:64]
        if kind.endswith(".*"):
            rows = rows.filter(type__startswith=kind[:-1])
        elif kind:
            rows = rows.filter(type=kind)
        subject = self.request.query_params.get("subject", "")[:200]
        if subject:
            rows = rows.filter(subject=subject)
        return rows.distinct().order_by("-pk")

    @extend_schema(parameters=[OpenApiParameter("type", str), OpenApiParameter("subject", str)])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)


class EndpointViewSet(OwnedViewMixin, mixins.CreateModelMixin, mixins.DestroyModelMixin,
                      viewsets.ReadOnlyModelViewSet):
    """Where the caller's events go: webhooks (signed; the secret is shown once), their mail,
    or (operators) the AMQP topic exchange; each with the rules that pick its events."""

    permission_classes = [IsAuthenticated]
    serializer_class = EndpointSerializer
    lookup_value_regex = ID_REGEX
    pagination_class = None
    queryset = Endpoint.objects.none()
    noun = "endpoint"
    http_method_names = ["get", "post", "patch", "delete"]

    def owned_queryset(self):
        dead, pending = Delivery.State.DEAD, Delivery.State.PENDING
        return Endpoint.objects.filter(user=self.request.user).prefetch_related(
            "rules").annotate(
            delivered=Count("deliveries", filter=Q(deliveries__state=Delivery.State.DELIVERED)),
            pending=Count("deliveries", filter=Q(deliveries__state=pending)),
            dead=Count("deliveries", filter=Q(deliveries__state=dead)))

    @extend_schema(request=EndpointSerializer, responses={201: EndpointWithSecretSerializer})
    def create(self, request, *args, **kwargs):
        given = self.get_serializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        # the rules as sent: the service refuses what the serializer would quietly drop
        endpoint = services.create(request.user, data["kind"], data.get("url", ""),
                                   data.get("name", ""), request.data.get("rules", []))
        made = self.owned_queryset().get(pk=endpoint.pk)    # with its (zero) counts
        return Response(EndpointWithSecretSerializer(made).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request, *args, **kwargs):
        endpoint = self.get_object()
        given = self.get_serializer(endpoint, data=request.data, partial=True)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        if "kind" in data and data["kind"] != endpoint.kind:
            raise DomainError("an endpoint's kind cannot change: make a new one", "kind")
        services.update(endpoint, url=data.get("url"), name=data.get("name"),
                        enabled=data.get("enabled"),
                        rules=request.data["rules"] if "rules" in data else None)
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(responses=RuleChoicesSerializer)
    @action(detail=False, methods=["get"])
    def choices(self, request):
        """The event types a rule may name (operators' alerts only for operators) and the
        collections whose ingest events the caller may have."""
        return Response(services.choices(request.user))

    @extend_schema(request=None, responses=EndpointWithSecretSerializer)
    @action(detail=True, methods=["post"])
    def rotate(self, request, pk=None):
        """A new signing secret (shown this once); the old one signs beside it for a while."""
        return Response(EndpointWithSecretSerializer(services.rotate(self.get_object())).data)

    @extend_schema(request=None, responses={202: EventDeliverySerializer})
    @action(detail=True, methods=["post"])
    def test(self, request, pk=None):
        """Send this endpoint a test event through its lane, like any other."""
        delivery = services.send_test(self.get_object())
        return Response(EventDeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses=EventDeliverySerializer(many=True),
                   parameters=[OpenApiParameter("state", str)])
    @action(detail=True, methods=["get"])
    def deliveries(self, request, pk=None):
        """The endpoint's delivery log: its newest 200 deliveries (state, tries, last error,
        latency)."""
        rows = self.get_object().deliveries.select_related("event").order_by("-pk")
        state = request.query_params.get("state", "")
        if state:
            if state not in Delivery.State.values:
                raise DomainError(f"state is one of {', '.join(Delivery.State.values)}",
                                  "state")
            rows = rows.filter(state=state)
        return Response(EventDeliverySerializer(rows[:LOG_ROWS], many=True).data)

    @extend_schema(request=DeliveryReplaySerializer, responses=DeliveryReplayedSerializer)
    @action(detail=True, methods=["post"])
    def replay(self, request, pk=None):
        """Send dead deliveries again from a fresh count of tries."""
        endpoint = self.get_object()
        given = DeliveryReplaySerializer(data=request.data)
        given.is_valid(raise_exception=True)
        rows = endpoint.deliveries.all()
        if "ids" in given.validated_data:
            rows = rows.filter(pk__in=given.validated_data["ids"])
        else:
            rows = rows.filter(state=Delivery.State.DEAD)
        done, refused = services.replay(rows)
        return Response({"replayed": done, "refused": refused})
