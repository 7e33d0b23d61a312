from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from . import shapes
from .granule_rows import GranuleRows, browse_url, footprint_of, granule_detail_row, timeline_row
from .models import Collection, File, Granule
from .services import RESIDENCIES, collection_page_extent
from .storage import storage

# the media a copy can lie on (FileCopy.medium in the archive, which the catalog may not import)
MEDIA = ["tape", "object"]

GEOMETRY_SCHEMA = {
    "type": "object",
    "description": "A GeoJSON geometry (RFC 7946): type and coordinates, [longitude, latitude]",
    "properties": {
        "type": {"type": "string", "enum": list(shapes.SUPPORTED)},
        "coordinates": {"type": "array", "items": {}},
        "geometries": {"type": "array", "items": {"type": "object"}},
    },
    "required": ["type"],
}


@extend_schema_field({**GEOMETRY_SCHEMA, "nullable": True})
class FootprintField(serializers.Field):
    """A granule's footprint as GeoJSON: the stored outline, else its box (older rows)."""

    def __init__(self, **kwargs):
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, granule):
        return footprint_of(granule)


@extend_schema_field(GEOMETRY_SCHEMA)
class GeometryField(serializers.JSONField):
    """A GeoJSON geometry in; checked where it is used (catalog.shapes)."""


class CollectionSerializer(serializers.ModelSerializer):
    key = serializers.CharField(read_only=True)
    granule_count = serializers.IntegerField(read_only=True, default=None)
    file_patterns = serializers.ListField(
        child=serializers.CharField(), read_only=True,
        help_text="Regular expressions naming the files of a granule; group 'granule' is its id",
    )

    class Meta:
        model = Collection
        fields = [
            "id", "key", "short_name", "version", "title", "description", "processing_level",
            "platform", "instrument", "access", "file_patterns", "duplicate_policy",
            "granule_count", "created_at", "updated_at",
        ]


class VariableSerializer(serializers.Serializer):
    name = serializers.CharField()
    units = serializers.CharField()
    long_name = serializers.CharField()


class SpatialExtentSerializer(serializers.Serializer):
    bbox = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, min_length=4, max_length=4,
        help_text="[west, south, east, north]; west > east crosses 180°; null when none is "
                  "declared and no granule is archived")
    source = serializers.ChoiceField(choices=["declared", "granules", "none"])


class TemporalExtentSerializer(serializers.Serializer):
    start = serializers.DateTimeField(allow_null=True)
    end = serializers.DateTimeField(allow_null=True,
                                    help_text="null: ongoing (declared), or nothing archived")
    source = serializers.ChoiceField(choices=["declared", "granules", "none"])


class CollectionDetailSerializer(CollectionSerializer):
    """A collection's page: what it is, how to cite it, what it holds and covers.
    `description` is its abstract."""

    doi_url = serializers.SerializerMethodField(help_text="The DOI as a link (null: no DOI)")
    variables = VariableSerializer(many=True, read_only=True)
    spatial_extent = serializers.SerializerMethodField(
        help_text="Declared by the provider, else what the archived granules cover")
    temporal_extent = serializers.SerializerMethodField(
        help_text="Declared by the provider, else from the first to the last archived granule")

    class Meta(CollectionSerializer.Meta):
        fields = [*CollectionSerializer.Meta.fields, "doi", "doi_url", "citation", "variables",
                  "spatial_extent", "temporal_extent"]

    def get_doi_url(self, collection) -> str | None:
        return f"https://doi.org/{collection.doi}" if collection.doi else None

    def _extent(self, collection):
        if not hasattr(self, "_extents"):
            self._extents = {}
        if collection.pk not in self._extents:
            self._extents[collection.pk] = collection_page_extent(collection)
        return self._extents[collection.pk]

    @extend_schema_field(SpatialExtentSerializer)
    def get_spatial_extent(self, collection):
        return SpatialExtentSerializer(self._extent(collection)[0]).data

    @extend_schema_field(TemporalExtentSerializer)
    def get_temporal_extent(self, collection):
        return TemporalExtentSerializer(self._extent(collection)[1]).data


class FileSerializer(serializers.ModelSerializer):
    class Meta:
        model = File
        fields = ["id", "name", "role", "size", "checksum_type", "checksum"]


class GranuleSerializer(serializers.ModelSerializer):
    collection = serializers.CharField(source="collection.key", read_only=True)
    bbox = serializers.ListField(child=serializers.FloatField(), read_only=True, allow_null=True,
                                 min_length=4, max_length=4,
                                 help_text="[west, south, east, north]; west > east crosses 180°")
    footprint = FootprintField(
        help_text="GeoJSON outline, split at the antimeridian (a MultiPolygon across 180°)")
    attributes = serializers.DictField(read_only=True)
    files = FileSerializer(many=True, read_only=True)
    residency = serializers.ChoiceField(
        choices=RESIDENCIES, read_only=True,
        help_text="cache: every file is on disk now; tape: ordering it needs a recall",
    )
    browse_url = serializers.SerializerMethodField(
        help_text="Where its browse image (a thumbnail) downloads from, to anyone who may see "
                  "the granule; null when it has none")

    class Meta:
        model = Granule
        fields = [
            "id", "collection", "granule_id", "version", "state", "temporal_start", "temporal_end",
            "bbox", "footprint", "attributes", "total_size", "residency", "files", "replaces",
            "created_at", "archived_at", "browse_url",
        ]
        # a page of them is written by granule_rows, the same values without DRF's per-field
        # calls
        list_serializer_class = GranuleRows

    def get_browse_url(self, granule) -> str | None:
        return browse_url(granule)


class CopySerializer(serializers.Serializer):
    """One copy of a file (or one segment of it) and where it lies: a tape volume in a silo, or
    an object in a bucket; the fields of the other medium are null."""

    copy_number = serializers.IntegerField()
    segment = serializers.IntegerField(help_text="0 unless the copy spans volumes")
    medium = serializers.ChoiceField(choices=MEDIA, help_text="tape or object (store)")
    state = serializers.CharField(help_text="written, verified or bad")
    length = serializers.IntegerField(help_text="Bytes of this copy (segment)")
    volume = serializers.CharField(source="volume.label", allow_null=True,
                                   help_text="Tape: the volume's label")
    silo = serializers.CharField(source="volume.silo.name", allow_null=True,
                                 help_text="Tape: the silo the volume is in")
    bucket = serializers.CharField(source="bucket.name", allow_null=True,
                                   help_text="Object store: the bucket (as policies name it)")
    key = serializers.SerializerMethodField(help_text="Object store: the object's key")
    offset = serializers.SerializerMethodField(
        help_text="Object store: where the file's bytes start in the object (small files share "
                  "a pack, a tar object; a ranged GET of `length` bytes from here reads one); 0 "
                  "for an object of its own")

    def get_key(self, copy) -> str | None:
        return copy.key if copy.bucket_id else None

    def get_offset(self, copy) -> int | None:
        return copy.data_offset if copy.bucket_id else None


class FileStorageSerializer(FileSerializer):
    """A file with where its bytes are: the disk cache and each copy on its medium."""

    in_cache = serializers.SerializerMethodField(help_text="In the disk cache now")
    copies = serializers.SerializerMethodField(help_text="Live copies, copy 1 first")
    download_url = serializers.SerializerMethodField(
        help_text="Where a logged-in user who may see the granule downloads the file now, "
                  "without an order: set when it is in the disk cache or the object store; "
                  "null when it is on tape only (order it to have it recalled)")

    class Meta(FileSerializer.Meta):
        fields = [*FileSerializer.Meta.fields, "in_cache", "copies", "download_url"]

    def get_in_cache(self, file) -> bool:
        return storage().file_in_cache(file)

    def get_download_url(self, file) -> str | None:
        return reverse("file-download", args=[file.pk]) if storage().file_direct(file) else None

    @extend_schema_field(CopySerializer(many=True))
    def get_copies(self, file):
        return CopySerializer(storage().copies(file), many=True).data


class GranuleDetailSerializer(GranuleSerializer):
    """One granule with its files' storage."""

    files = FileStorageSerializer(many=True, read_only=True)

    class Meta(GranuleSerializer.Meta):
        list_serializer_class = serializers.ListSerializer    # granule_rows has no storage

    def to_representation(self, instance):
        """The fields' values, written by granule_rows.granule_detail_row (tests/distribution/
        test_portal_api.py holds the two equal)."""
        return granule_detail_row(instance, timezone.get_current_timezone())


class TimelineBucketSerializer(serializers.Serializer):
    start = serializers.DateTimeField(help_text="Where the bucket starts (UTC)")
    count = serializers.IntegerField(help_text="Granules starting in it")


class TimelineSerializer(serializers.Serializer):
    bucket = serializers.ChoiceField(choices=["hour", "day", "month", "year"])
    total = serializers.IntegerField(help_text="Granules counted (all that match)")
    buckets = TimelineBucketSerializer(
        many=True, help_text="Every bucket from the first granule's to the last's, empty "
                             "ones with 0; none when nothing matches")
    counts_exact = serializers.BooleanField(
        required=False,
        help_text="false when a shape search had too many candidates to test each: the "
        "counts are then of the granules whose box meets the shape (an upper bound)")

    def to_representation(self, timeline):
        """The fields' values, written by granule_rows.timeline_row (tests/catalog/
        test_granule_rows.py holds the two equal); a Timeline has no counts_exact: the view
        adds it."""
        return timeline_row(timeline)


class GranuleSearchSerializer(serializers.Serializer):
    """The body of a POST granule search: the list's query parameters as JSON (only for the
    schema: the filters check the values, and attr.NAME[.OP] keys are taken too)."""

    intersects = GeometryField(required=False, help_text=(
        f"Granules whose footprint meets this geometry (at most {shapes.MAX_VERTICES} "
        "vertices; planar, as RFC 7946: across 180° cut it there or write 170 -> 190)"))
    bbox = serializers.CharField(required=False, help_text="west,south,east,north")
    collection = serializers.CharField(required=False, help_text="SHORT.VERSION, comma-separated")
    start = serializers.CharField(required=False, help_text="Overlaps from (ISO 8601)")
    end = serializers.CharField(required=False, help_text="Overlaps until (ISO 8601)")
    q = serializers.CharField(required=False, help_text=(
        "Free text: each word a granule id (wildcards * and ?) or a word of its collection's "
        "name, title, description, platform or instrument"))
    granule_id = serializers.CharField(
        required=False, help_text="Granule id, case-insensitive; * and ? are wildcards")
    state = serializers.ChoiceField(choices=Granule.State.choices, required=False)
    processing_level = serializers.CharField(required=False)
    platform = serializers.CharField(required=False)
    instrument = serializers.CharField(required=False)
    residency = serializers.ChoiceField(choices=RESIDENCIES, required=False)


class TimelineSearchSerializer(GranuleSearchSerializer):
    """The body of a POST timeline: the search's filters and the bucket size."""

    bucket = serializers.ChoiceField(choices=["auto", "hour", "day", "month", "year"],
                                     required=False, help_text="Bucket size (default auto)")


class ShapeUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text=(
        "GeoJSON (.geojson, .json), KML (.kml, .kmz) or a zipped shapefile (.zip holding the "
        ".shp, .shx and .dbf, and a .prj in WGS 84 if any); at most 5 MiB"))


class ShapeReadingSerializer(serializers.Serializer):
    """The shape to search with that an uploaded file gives."""

    geometry = GeometryField(help_text="Send it as `intersects` (split at the antimeridian)")
    format = serializers.ChoiceField(choices=["geojson", "kml", "shapefile"])
    features = serializers.IntegerField(help_text="Features united into the geometry")
    vertices = serializers.IntegerField()
    simplified = serializers.BooleanField(
        help_text=f"Simplified to fit the search limit of {shapes.MAX_VERTICES} vertices")
    note = serializers.CharField(allow_null=True, help_text="What was simplified, and how much")
