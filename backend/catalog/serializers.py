from rest_framework import serializers

from .models import Collection, File, Granule
from .services import RESIDENCIES


class CollectionSerializer(serializers.ModelSerializer):
    key = serializers.CharField(read_only=True)
    granule_count = serializers.IntegerField(read_only=True, default=None)

    class Meta:
        model = Collection
        fields = [
            "id", "key", "short_name", "version", "title", "description", "processing_level",
            "platform", "instrument", "access", "file_patterns", "duplicate_policy",
            "granule_count", "created_at", "updated_at",
        ]


class FileSerializer(serializers.ModelSerializer):
    class Meta:
        model = File
        fields = ["id", "name", "role", "size", "checksum_type", "checksum"]


class GranuleSerializer(serializers.ModelSerializer):
    collection = serializers.CharField(source="collection.key", read_only=True)
    bbox = serializers.ListField(child=serializers.FloatField(), read_only=True, allow_null=True)
    files = FileSerializer(many=True, read_only=True)
    residency = serializers.ChoiceField(
        choices=RESIDENCIES, read_only=True,
        help_text="cache: every file is on disk now; tape: ordering it needs a recall",
    )

    class Meta:
        model = Granule
        fields = [
            "id", "collection", "granule_id", "version", "state", "temporal_start", "temporal_end",
            "bbox", "attributes", "total_size", "residency", "files", "replaces", "created_at",
            "archived_at",
        ]
