"""Shapes of the ingest API. Granule specs are checked in services (fast for 10,000 granules);
the spec serializers here document them for the OpenAPI schema."""
from rest_framework import serializers
from rest_framework.reverse import reverse

from backend.actions import ActionSerializer
from backend.catalog.serializers import GeometryField

from .models import IngestGranule, IngestRequest, Pdr, percent_done

_when = serializers.DateTimeField()


class FileSpecSerializer(serializers.Serializer):
    name = serializers.CharField(required=False, help_text="Defaults to the last part of path")
    path = serializers.CharField(help_text="Relative path in the provider's staging area")
    size = serializers.IntegerField(min_value=1)
    checksum_type = serializers.ChoiceField(choices=["MD5", "SHA256", "CKSUM", "ADLER32"])
    checksum = serializers.CharField()
    role = serializers.ChoiceField(choices=["data", "metadata", "browse", "qa"], required=False)


class TemporalSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()


class GranuleSpecSerializer(serializers.Serializer):
    collection = serializers.CharField(help_text="SHORT.VERSION, e.g. MOD021KM.061")
    granule_id = serializers.CharField()
    temporal = TemporalSerializer(required=False, help_text="Else read from the files")
    bbox = serializers.ListField(child=serializers.FloatField(), min_length=4, max_length=4,
                                 required=False, help_text="[west, south, east, north]")
    footprint = GeometryField(
        required=False, help_text="GeoJSON outline (Polygon, MultiPolygon, ...), planar as "
        "RFC 7946 says (across 180° cut it there or write 170 -> 190); its box replaces bbox. "
        "Else read from the files (UMM-G GPolygons, .met G-ring, ACDD geospatial_bounds), "
        "else the box")
    attributes = serializers.DictField(required=False)
    files = FileSpecSerializer(many=True)


class BulkRequestSerializer(serializers.Serializer):
    provider = serializers.CharField(required=False,
                                     help_text="Needed only by users of several providers")
    granules = GranuleSpecSerializer(many=True)


class PdrSubmitSerializer(serializers.Serializer):
    provider = serializers.CharField(required=False)
    name = serializers.CharField(help_text="File name of the PDR, e.g. MODAPS.2024001.PDR")
    text = serializers.CharField(trim_whitespace=False)


class RetrySerializer(serializers.Serializer):
    positions = serializers.ListField(child=serializers.IntegerField(min_value=0,
                                                                     max_value=2**31 - 1),
                                      required=False, help_text="Default: every failed granule")


class IngestGranuleRowSerializer(serializers.Serializer):
    """One granule of a request (documentation of granule_rows())."""

    position = serializers.IntegerField()
    collection = serializers.CharField()
    granule_id = serializers.CharField()
    state = serializers.ChoiceField(choices=IngestGranule.State.choices)
    disposition = serializers.CharField(help_text="ECS PAN vocabulary, when failed")
    reason = serializers.CharField(help_text="Why it failed, in a sentence")
    bytes_total = serializers.IntegerField()
    bytes_done = serializers.IntegerField()
    catalog_granule = serializers.IntegerField(allow_null=True)
    attempts = serializers.IntegerField()
    updated_at = serializers.DateTimeField()
    archived_at = serializers.DateTimeField(allow_null=True)
    status = serializers.CharField(help_text="What it waits for, or why it stopped and what "
                                             "happens next")
    stopped = serializers.BooleanField(help_text="It waits for someone to act, not for work")
    actions = ActionSerializer(many=True, help_text="What can still be done, and why not")


GRANULE_FIELDS = ["position", "collection_key", "granule_id", "state", "disposition", "reason",
                  "bytes_total", "bytes_done", "catalog_granule", "attempts", "updated_at",
                  "archived_at"]


def granule_rows(queryset):
    """Granule rows as plain dicts: quick enough for the 10,000 of a large request."""
    for row in queryset.values(*GRANULE_FIELDS):
        row["collection"] = row.pop("collection_key")
        yield row


REQUEST_VALUES = ["id", "provider__name", "way", "label", "state", "granule_count",
                  "archived_count", "failed_count", "bytes_total", "bytes_done", "pdr__id",
                  "created_at", "updated_at", "finished_at"]


def _links(route, request):
    """id -> the absolute URL of `route` for that id, reversing once rather than per row."""
    marker = 987654321
    head, tail = reverse(route, args=[marker], request=request).rsplit(str(marker), 1)
    return lambda pk: f"{head}{pk}{tail}"


def request_rows(rows, request):
    """IngestRequestSerializer's output from .values(*REQUEST_VALUES) rows: lists of 200 without
    three model instances and two reverse() calls per row."""
    request_url = _links("ingest-request-detail", request)
    pdr_url = _links("ingest-pdr-detail", request)
    for r in rows:
        yield {
            "id": r["id"], "url": request_url(r["id"]), "provider": r["provider__name"],
            "way": r["way"], "label": r["label"], "state": r["state"],
            "granule_count": r["granule_count"], "archived_count": r["archived_count"],
            "failed_count": r["failed_count"], "bytes_total": r["bytes_total"],
            "bytes_done": r["bytes_done"],
            "percent_done": percent_done(r["bytes_done"], r["bytes_total"], r["state"]),
            "pdr": pdr_url(r["pdr__id"]) if r["pdr__id"] is not None else None,
            "created_at": _when.to_representation(r["created_at"]),
            "updated_at": _when.to_representation(r["updated_at"]),
            "finished_at": _when.to_representation(r["finished_at"]),
        }


class IngestRequestSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    provider = serializers.CharField(source="provider.name")
    percent_done = serializers.FloatField()
    pdr = serializers.SerializerMethodField()

    class Meta:
        model = IngestRequest
        fields = ["id", "url", "provider", "way", "label", "state", "granule_count",
                  "archived_count", "failed_count", "bytes_total", "bytes_done", "percent_done",
                  "pdr", "created_at", "updated_at", "finished_at"]

    def get_url(self, obj) -> str:
        return reverse("ingest-request-detail", args=[obj.pk], request=self.context.get("request"))

    def get_pdr(self, obj) -> str | None:
        pdr = getattr(obj, "pdr", None)
        if pdr is None:
            return None
        return reverse("ingest-pdr-detail", args=[pdr.pk], request=self.context.get("request"))


class PdrSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    provider = serializers.CharField(source="provider.name")
    request = serializers.SerializerMethodField()

    class Meta:
        model = Pdr
        fields = ["id", "url", "provider", "name", "path", "state", "disposition", "detail",
                  "request", "pdrd", "pan", "created_at", "updated_at"]

    def get_url(self, obj) -> str:
        return reverse("ingest-pdr-detail", args=[obj.pk], request=self.context.get("request"))

    def get_request(self, obj) -> str | None:
        if not obj.request_id:
            return None
        return reverse("ingest-request-detail", args=[obj.request_id],
                       request=self.context.get("request"))


class RetryResultSerializer(IngestRequestSerializer):
    """The request after a retry, and how many granules went round again."""

    retried = serializers.IntegerField()

    class Meta(IngestRequestSerializer.Meta):
        fields = [*IngestRequestSerializer.Meta.fields, "retried"]


class RequestDetailSerializer(IngestRequestSerializer):
    """A request with its granules (documentation of the detail view)."""

    counts = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="Granules per state")
    granules = IngestGranuleRowSerializer(many=True, help_text="Left out with ?granules=0")

    class Meta(IngestRequestSerializer.Meta):
        fields = [*IngestRequestSerializer.Meta.fields, "counts", "granules"]
        optional_in_response = ["granules"]
