"""Shapes of subsetting options, their estimate, and of an order's links (what an item sends:
the output when it was cut)."""
from rest_framework import serializers

from backend.catalog.serializers import GeometryField
from backend.ids import IdField

from .models import Order
from .subset import FORMATS, MAX_VARIABLES


class SubsetOptionsSerializer(serializers.Serializer):
    """What to cut out of each data file; checked against the collections when ordering."""

    variables = serializers.ListField(
        child=serializers.CharField(max_length=256), required=False, max_length=MAX_VARIABLES,
        help_text="Variables to keep (from the collection's variables); coordinates stay")
    bbox = serializers.ListField(
        child=serializers.FloatField(), required=False, allow_null=True, min_length=4,
        max_length=4, help_text="[west, south, east, north]; west > east crosses 180°")
    intersects = GeometryField(required=False, allow_null=True,
                               help_text="A GeoJSON polygon (the search's shape); not with bbox")
    start = serializers.CharField(required=False, allow_null=True, max_length=40,
                                  help_text="ISO 8601: keep time steps from then")
    end = serializers.CharField(required=False, allow_null=True, max_length=40,
                                help_text="ISO 8601: keep time steps until then")
    format = serializers.ChoiceField(choices=list(FORMATS.items()), default="netcdf4")


class SubsetPreviewSerializer(serializers.Serializer):
    granules = serializers.ListField(
        child=IdField(), required=False, allow_empty=False, max_length=10000,
        help_text="Granule ids; leave out for the cart")
    subset = SubsetOptionsSerializer(required=False, allow_null=True)


class SubsetEstimateItemSerializer(serializers.Serializer):
    granule = serializers.IntegerField(source="granule.pk")
    collection = serializers.CharField(source="granule.collection.key")
    granule_id = serializers.CharField(source="granule.granule_id")
    size = serializers.IntegerField(help_text="Bytes delivered without the subset")
    estimate = serializers.IntegerField(help_text="About how many bytes the output holds")


class SubsetFormatSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()


class CollectionVariablesSerializer(serializers.Serializer):
    collection = serializers.CharField()
    subsettable = serializers.BooleanField()
    variables = serializers.ListField(child=serializers.CharField())


class SubsetEstimateSerializer(serializers.Serializer):
    cuts = serializers.BooleanField(help_text="Something is cut or converted")
    bytes = serializers.IntegerField(help_text="Bytes delivered without the subset")
    estimate = serializers.IntegerField(help_text="About how many bytes with it")
    items = SubsetEstimateItemSerializer(many=True)
    collections = CollectionVariablesSerializer(many=True)
    formats = SubsetFormatSerializer(many=True)


class LinkSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    file_id = serializers.IntegerField()
    granule = serializers.CharField()
    name = serializers.CharField(help_text="The output's name when the file was cut")
    size = serializers.IntegerField()
    checksum_type = serializers.CharField()
    checksum = serializers.CharField()
    url = serializers.URLField(required=False)
    expires_at = serializers.DateTimeField(required=False)
    error = serializers.CharField(required=False)
    reason = serializers.CharField(required=False, help_text="Why nothing was left (empty)")
    eta_s = serializers.FloatField(required=False, allow_null=True)


class LinksSerializer(serializers.Serializer):
    order = serializers.IntegerField()
    state = serializers.ChoiceField(choices=Order.State.choices)
    state_label = serializers.SerializerMethodField(help_text="The state in words")
    expires_at = serializers.DateTimeField(allow_null=True)
    links = LinkSerializer(many=True)
    failed = LinkSerializer(many=True)
    waiting = LinkSerializer(many=True)
    empty = LinkSerializer(many=True, help_text="Cut to nothing: outside the area or times")
    subset = serializers.JSONField(allow_null=True, help_text="The order's subset, if any")

    def get_state_label(self, links) -> str:
        return Order.State(links["state"]).label
