from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .models import Collection, File, Granule
from .services import RESIDENCIES, collection_page_extent
from .storage import storage


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
            "bbox", "attributes", "total_size", "residency", "files", "replaces", "created_at",
            "archived_at", "browse_url",
        ]

    def get_browse_url(self, granule) -> str | None:
        """The first browse file by name (from the prefetched files: no query per row)."""
        browse = next((f for f in sorted(granule.files.all(), key=lambda f: f.name)
                       if f.role == File.Role.BROWSE), None)
        return reverse("file-download", args=[browse.pk]) if browse else None


class TapeCopySerializer(serializers.Serializer):
    copy_number = serializers.IntegerField()
    volume = serializers.CharField(source="volume.label")
    silo = serializers.CharField(source="volume.silo.name")
    state = serializers.CharField()


class FileStorageSerializer(FileSerializer):
    """A file with where its bytes are: the disk cache and each copy on tape."""

    in_cache = serializers.SerializerMethodField(help_text="In the disk cache now")
    tape_copies = serializers.SerializerMethodField()

    class Meta(FileSerializer.Meta):
        fields = [*FileSerializer.Meta.fields, "in_cache", "tape_copies"]

    def get_in_cache(self, file) -> bool:
        return storage().file_in_cache(file)

    @extend_schema_field(TapeCopySerializer(many=True))
    def get_tape_copies(self, file):
        return TapeCopySerializer(storage().tape_copies(file), many=True).data


class GranuleDetailSerializer(GranuleSerializer):
    """One granule with its files' storage."""

    files = FileStorageSerializer(many=True, read_only=True)


class TimelineBucketSerializer(serializers.Serializer):
    start = serializers.DateTimeField(help_text="Where the bucket starts (UTC)")
    count = serializers.IntegerField(help_text="Granules starting in it")


class TimelineSerializer(serializers.Serializer):
    bucket = serializers.ChoiceField(choices=["hour", "day", "month", "year"])
    total = serializers.IntegerField(help_text="Granules counted (all that match)")
    buckets = TimelineBucketSerializer(
        many=True, help_text="Every bucket from the first granule's to the last's, empty "
                             "ones with 0; none when nothing matches")
