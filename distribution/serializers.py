"""Shapes of carts, orders, destinations and subscriptions; input checks say what is wrong."""
import json

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from backend.archive import services as archive
from backend.catalog import shapes
from backend.catalog.filters import parse_instant
from backend.catalog.geo import BBoxError, parse_bbox
from backend.catalog.retired import RETIRED_STATES
from backend.catalog.serializers import GeometryField
from backend.ids import IdField

from .matching import OPS, ConditionError, check_conditions
from .models import (
    CartItem,
    Delivery,
    Destination,
    Order,
    OrderItem,
    Subscription,
    SubscriptionDelivery,
)
from .order_rows import order_detail_row, order_row, waits_for_its_part
from .services.destinations import (
    DESTINATION_FIELDS,
    clean_destination,
    destination_location,
    host_key_fingerprint,
)
from .services.limits import order_limits
from .services.subscriptions import collection_by_key, save_subscription
from .services.transforms import standing_subset
from .subset_serializers import (  # noqa: F401 - the API's link shapes live there
    LinkSerializer,
    LinksSerializer,
    SubsetOptionsSerializer,
)


def instant(value, end=False):
    """An ISO 8601 date or date-time, or None; anything else is a 400 that says why."""
    if value in (None, ""):
        return None
    try:
        return parse_instant(value, end=end)
    except DjangoValidationError as exc:
        raise serializers.ValidationError(exc.messages) from exc


class CartItemSerializer(serializers.ModelSerializer):
    granule = serializers.IntegerField(source="granule_id")
    collection = serializers.CharField(source="granule.collection.key")
    granule_id = serializers.CharField(source="granule.granule_id")
    size = serializers.IntegerField(source="granule.total_size")
    in_cache = serializers.SerializerMethodField(
        help_text="Every file is in the disk cache: ready as soon as it is ordered")
    eta_s = serializers.SerializerMethodField(
        help_text="On tape: about how many seconds a recall ordered now would take; null when "
                  "cached, or when it cannot be said (no drive online, no readable copy)")

    class Meta:
        model = CartItem
        fields = ["granule", "collection", "granule_id", "size", "in_cache", "eta_s", "added_at"]

    def get_in_cache(self, item) -> bool:
        return self.context["availability"][item.granule_id][0]

    def get_eta_s(self, item) -> float | None:
        return self.context["availability"][item.granule_id][1]


class OrderLimitsSerializer(serializers.Serializer):
    granules = serializers.IntegerField(help_text="Most granules in one order (and the cart)")
    bytes = serializers.IntegerField(help_text="Most bytes in one order")
    open_orders = serializers.IntegerField(help_text="Most orders open at once")
    open_orders_used = serializers.IntegerField(help_text="The caller's open orders now")


class WithdrawnItemSerializer(serializers.Serializer):
    """A granule withdrawn or deleted since it was put in the cart."""

    granule = serializers.IntegerField(source="item.granule_id")
    collection = serializers.CharField(source="item.granule.collection.key")
    granule_id = serializers.CharField(source="item.granule.granule_id")
    state = serializers.ChoiceField(choices=RETIRED_STATES, source="item.granule.state")
    at = serializers.DateTimeField(source="retired.at", help_text="When")
    reason = serializers.CharField(source="retired.reason", help_text="What happened and why")


class CartSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    bytes = serializers.IntegerField()
    granules = CartItemSerializer(many=True)
    withdrawn = WithdrawnItemSerializer(
        many=True, help_text="Granules withdrawn or deleted since they were added: not "
        "ordered with the cart; they stay listed until removed")
    limits = OrderLimitsSerializer(help_text="What an order of the cart must keep within")


def cart_body(user, contents):
    """The cart (services.cart.Contents) with each granule marked cached or on tape (with the
    recall estimate)."""
    items = contents.items
    availability = archive.estimate_availability([i.granule_id for i in items])
    withdrawn = [{"item": item, "retired": retired} for item, retired in contents.withdrawn]
    return CartSerializer({"count": len(items), "bytes": sum(i.granule.total_size for i in items),
                           "granules": items, "withdrawn": withdrawn,
                           "limits": order_limits(user)},
                          context={"availability": availability}).data


class SearchFiltersSerializer(serializers.Serializer):
    filters = serializers.DictField(
        child=serializers.CharField(max_length=2000, allow_blank=True), allow_empty=True,
        help_text="The granule search as the list's query parameters, e.g. {\"collection\": "
                  "\"MOD021KM.061\", \"start\": \"2024-01-01\", \"attr.cloud_cover.lt\": "
                  "\"20\"}; cursor, limit and ordering are ignored")

    def validate_filters(self, value):
        if len(value) > 50:
            raise serializers.ValidationError("a search has at most 50 filters")
        return value


class AddedMatchingSerializer(serializers.Serializer):
    matched = serializers.IntegerField(help_text="Granules the search found")
    added = serializers.IntegerField(help_text="Of them, those not in the cart before")
    cart = CartSerializer()


class GranuleIdsSerializer(serializers.Serializer):
    granules = serializers.ListField(child=IdField(), allow_empty=False)


class OrderCreateSerializer(serializers.Serializer):
    granules = serializers.ListField(
        child=IdField(), required=False, allow_empty=False,
        help_text="Granule ids; leave out to order the whole cart",
    )
    delivery = serializers.ChoiceField(choices=Delivery.choices, default=Delivery.HTTPS)
    destination = IdField(required=False, allow_null=True)
    subset = SubsetOptionsSerializer(required=False, allow_null=True)


class OrderItemSerializer(serializers.ModelSerializer):
    granule = serializers.CharField(source="granule.__str__")
    granule_pk = serializers.IntegerField(source="granule_id")
    name = serializers.CharField(source="served.name", help_text="Of the output when cut")
    size = serializers.IntegerField(source="served.size")
    checksum_type = serializers.CharField(source="served.checksum_type")
    checksum = serializers.CharField(source="served.checksum")
    state_label = serializers.CharField(source="get_state_display", read_only=True,
                                        help_text="The state in words, as pages show it")
    residency = serializers.SerializerMethodField(help_text="cache, or tape while recalled")
    next_part = serializers.SerializerMethodField(
        help_text="Waiting for its turn: the order is staged in parts, and this file is recalled "
                  "once files ready before it are delivered")

    class Meta:
        model = OrderItem
        fields = ["id", "granule_pk", "granule", "file_id", "name", "size", "checksum_type",
                  "checksum", "state", "state_label", "residency", "next_part", "eta_s", "error",
                  "ready_at", "provenance",
                  "expires_at", "downloaded_at", "pushed_at"]

    @extend_schema_field(serializers.ChoiceField(choices=["cache", "tape"]))
    def get_residency(self, item):
        return "cache" if item.in_cache else "tape"

    @extend_schema_field(serializers.BooleanField())
    def get_next_part(self, item):
        return next_part(item)


def next_part(item):
    """A waiting item of a staging order that the order has not asked the archive for yet."""
    return waits_for_its_part(item.order.state, item)


class OrderCountsSerializer(serializers.Serializer):
    """Files of an order per item state (documentation of OrderSerializer.get_counts)."""

    waiting = serializers.IntegerField()
    ready = serializers.IntegerField()
    failed = serializers.IntegerField()
    expired = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    empty = serializers.IntegerField()


class OrderSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username")
    state_label = serializers.CharField(source="get_state_display", read_only=True,
                                        help_text="The state in words, as pages show it")
    counts = serializers.SerializerMethodField()
    in_parts = serializers.SerializerMethodField(
        help_text="Staged in parts: the order is larger than its share of the cache, so some "
                  "files wait until those ready are delivered (downloaded, or pushed)")

    class Meta:
        model = Order
        fields = ["id", "user", "state", "state_label", "delivery", "destination", "subscription",
                  "total_bytes", "counts", "in_parts", "error", "subset", "created_at",
                  "updated_at", "ready_at", "expires_at"]

    @extend_schema_field(serializers.BooleanField())
    def get_in_parts(self, order):
        return any(next_part(item) for item in order.items.all())

    @extend_schema_field(OrderCountsSerializer)
    def get_counts(self, order):
        counts = {s: 0 for s in OrderItem.State.values}
        for item in order.items.all():
            counts[item.state] += 1
        return counts

    def to_representation(self, instance):
        """The fields' values, written by order_rows.order_row (tests/distribution/
        test_order_rows.py holds the two equal)."""
        return order_row(instance)


class OrderDetailSerializer(OrderSerializer):
    items = OrderItemSerializer(many=True, read_only=True)

    class Meta(OrderSerializer.Meta):
        fields = [*OrderSerializer.Meta.fields, "items"]

    def to_representation(self, instance):
        """The fields' values with the items', written by order_rows.order_detail_row (tests/
        distribution/test_order_rows.py holds the two equal)."""
        return order_detail_row(instance)


class DestinationSerializer(serializers.ModelSerializer):
    folder = serializers.SerializerMethodField(help_text="Where deliveries go")
    host_key_fingerprint = serializers.SerializerMethodField(
        help_text="sftp: SHA256 fingerprint of the pinned host key, as ssh-keygen -l shows it")

    class Meta:
        model = Destination
        fields = ["id", "name", "kind", "path", "host", "port", "username", "host_key",
                  "host_key_fingerprint", "folder", "created_at"]

    def get_folder(self, destination) -> str:
        return destination_location(destination)

    def get_host_key_fingerprint(self, destination) -> str:
        return host_key_fingerprint(destination)

    def owner(self):
        return self.instance.user if self.instance is not None else self.context["request"].user

    def validate_name(self, value):
        others = Destination.objects.filter(user=self.owner(), name=value)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        if others.exists():
            raise serializers.ValidationError(f"You already have a destination named {value}.")
        return value

    def validate(self, data):
        current = {f: getattr(self.instance, f) for f in ("name", *DESTINATION_FIELDS)
                   if self.instance is not None}
        return {**data, **clean_destination(self.owner(), {**current, **data}, data)}


class SftpKeySerializer(serializers.Serializer):
    public_key = serializers.CharField(help_text="Add this line to ~/.ssh/authorized_keys")
    fingerprint = serializers.CharField()


class BBoxField(serializers.JSONField):
    """A subscription's box: [west, south, east, north] or 'w,s,e,n' in, four numbers out."""


class BBoxFieldSchema(OpenApiSerializerFieldExtension):
    target_class = BBoxField

    def map_serializer_field(self, auto_schema, direction):
        number = {"type": "number"}
        if direction == "response":
            return {"type": "array", "items": number, "minItems": 4, "maxItems": 4}
        typed = {"type": "array", "items": {"oneOf": [number, {"type": "string"}]},
                 "minItems": 4, "maxItems": 4}
        return {"oneOf": [typed, {"type": "string"}]}


@extend_schema_field({"oneOf": [
    {"type": "string"}, {"type": "number"}, {"type": "boolean"},
    {"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "number"}]}},
]})
class ConditionValueField(serializers.JSONField):
    pass


class ConditionSerializer(serializers.Serializer):
    """One attribute condition (documentation of matching.check_conditions)."""

    name = serializers.CharField()
    op = serializers.ChoiceField(choices=OPS)
    value = ConditionValueField()


@extend_schema_field(ConditionSerializer(many=True))
class ConditionsField(serializers.JSONField):
    pass


class SubscriptionSerializer(serializers.ModelSerializer):
    collections = serializers.ListField(
        child=serializers.CharField(), allow_empty=False,
        help_text="Collection keys SHORT.VERSION",
    )
    bbox = BBoxField(required=False, allow_null=True,
                     help_text="[west, south, east, north] or 'w,s,e,n'; with intersects, "
                               "the shape's box (read only)")
    intersects = GeometryField(
        required=False, allow_null=True,
        help_text="A GeoJSON shape (Polygon, MultiPolygon, Point, LineString ..., at most "
                  f"{shapes.MAX_VERTICES} vertices; planar, as RFC 7946: across 180° cut it "
                  "there or write 170 -> 190): only granules whose footprint meets it are "
                  "delivered. Replaces bbox; null removes the shape and its box")
    start = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                  help_text="Granules overlapping from (ISO 8601)")
    end = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                help_text="Granules overlapping until (ISO 8601)")
    conditions = ConditionsField(required=False,
                                 help_text="[{name, op (eq ne lt lte gt gte in), value}]")
    subset = SubsetOptionsSerializer(required=False, allow_null=True,
                                     help_text="Cut each delivered data file (order, push)")

    class Meta:
        model = Subscription
        fields = ["id", "name", "collections", "bbox", "intersects", "start", "end",
                  "conditions", "mode", "destination", "new_versions", "subset", "active",
                  "created_at"]

    def to_representation(self, subscription):
        return {
            "id": subscription.pk, "name": subscription.name,
            "collections": sorted(c.key for c in subscription.collections.all()),
            "bbox": subscription.bbox,
            "intersects": json.loads(subscription.geometry) if subscription.geometry else None,
            "start": subscription.temporal_start, "end": subscription.temporal_end,
            "conditions": subscription.conditions, "mode": subscription.mode,
            "destination": subscription.destination_id,
            "new_versions": subscription.new_versions, "subset": subscription.subset or None,
            "active": subscription.active,
            "created_at": subscription.created_at,
        }

    def validate_bbox(self, value):
        if value in (None, ""):
            return None
        try:
            return parse_bbox(value)
        except BBoxError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def validate_intersects(self, value):
        if value is None:
            return None
        try:
            return shapes.parse_geojson(value, "intersects")
        except shapes.ShapeError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def validate_start(self, value):
        return instant(value)

    def validate_end(self, value):
        return instant(value, end=True)

    def validate_conditions(self, value):
        try:
            return check_conditions(value)
        except ConditionError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def owner(self):
        """Who the subscription belongs to: its owner when it exists (an operator editing it
        does not take it over), else the caller creating it."""
        return self.instance.user if self.instance is not None else self.context["request"].user

    def validate_name(self, value):
        others = Subscription.objects.filter(user=self.owner(), name__iexact=value)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        taken = others.values_list("name", flat=True).first()
        if taken is not None:
            raise serializers.ValidationError(
                f"You already have a subscription named {taken}: choose another name.")
        return value

    def validate_destination(self, value):
        if value is not None and value.user_id != self.owner().pk:
            raise serializers.ValidationError(
                f"{self.owner().username} has no destination {value.pk}.")
        return value

    def validate(self, data):
        if data.get("bbox") is not None and data.get("intersects") is not None:
            raise serializers.ValidationError(
                {"intersects": "Give either bbox or intersects, not both."})
        start = data.get("start", getattr(self.instance, "temporal_start", None))
        end = data.get("end", getattr(self.instance, "temporal_end", None))
        if start and end and start > end:
            raise serializers.ValidationError({"end": "The window ends before it starts."})
        return data

    def save(self, **kwargs):
        data = dict(self.validated_data)
        user = self.owner()
        subscription = self.instance or Subscription(user=user)
        if "bbox" in data or "intersects" in data:
            box, shape = data.pop("bbox", None), data.pop("intersects", None)
            if shape is not None:
                box = shape.bbox()
            subscription.geometry = shapes.to_text(shape) if shape is not None else None
            subscription.west, subscription.south, subscription.east, subscription.north = (
                box.as_list() if box else (None, None, None, None))
        if "start" in data:
            subscription.temporal_start = data.pop("start")
        if "end" in data:
            subscription.temporal_end = data.pop("end")
        keys = data.pop("collections", None)
        options = data.pop("subset", subscription.subset)
        for field, value in data.items():
            setattr(subscription, field, value)
        if keys is None:
            collections = list(subscription.collections.all())
        else:
            collections = [collection_by_key(user, k) for k in keys]
        subscription.subset = standing_subset(collections, options, subscription.mode)
        self.instance = save_subscription(subscription, collections)
        return self.instance


class SubscriptionPreviewSerializer(SubscriptionSerializer):
    """The filter of a subscription (checked the same way) and how many days back to look."""

    days = serializers.IntegerField(min_value=1, max_value=366, default=30,
                                    help_text="Count granules archived in the last N days")

    class Meta(SubscriptionSerializer.Meta):
        fields = ["collections", "bbox", "intersects", "start", "end", "conditions",
                  "new_versions", "subset", "days"]

    def save(self, **kwargs):
        raise NotImplementedError("a preview is never saved")


class PreviewGranuleSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    collection = serializers.CharField(source="collection.key")
    granule_id = serializers.CharField()
    temporal_start = serializers.DateTimeField()
    temporal_end = serializers.DateTimeField()
    archived_at = serializers.DateTimeField()


class SubscriptionPreviewResultSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Granules archived since `since` that match")
    days = serializers.IntegerField()
    since = serializers.DateTimeField()
    sample = PreviewGranuleSerializer(many=True, help_text="The newest few of them")


class SubscriptionApplySerializer(serializers.Serializer):
    since = serializers.CharField(help_text="Granules archived since (ISO 8601)")

    def validate_since(self, value):
        return instant(value)


class SubscriptionApplyResultSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What is being delivered, in a sentence")
    since = serializers.DateTimeField()


class SubscriptionDeliverySerializer(serializers.ModelSerializer):
    granule = serializers.CharField(source="granule.__str__")
    granule_pk = serializers.IntegerField(source="granule_id")

    class Meta:
        model = SubscriptionDelivery
        fields = ["id", "granule_pk", "granule", "state", "attempts", "detail", "created_at",
                  "delivered_at"]
