"""Shapes of the console's granule API: read-only views of what the services return, and the
bodies of the lifecycle actions."""
from rest_framework import serializers

from backend.actions import ActionSerializer
from backend.archive.models import CacheEntry, FileCopy
from backend.archive.services import RETIRE_REASON_MAX as MAX_REASON
from backend.catalog.models import File, Granule


class ConsoleGranuleSerializer(serializers.ModelSerializer):
    collection = serializers.CharField(source="collection.key")
    provider = serializers.CharField(allow_null=True)
    failure = serializers.SerializerMethodField(
        help_text="Why its archive work failed for good (a granule still registered or "
                  "archiving that the failed filter lists); null when none did")

    class Meta:
        model = Granule
        fields = ["id", "granule_id", "version", "collection", "provider", "state", "failure",
                  "temporal_start", "temporal_end", "total_size", "created_at", "archived_at",
                  "updated_at"]

    def get_failure(self, granule) -> str | None:
        return getattr(granule, "failure", None)


class IngestFailureSerializer(serializers.Serializer):
    """A granule that failed in ingest before the catalog had it."""

    id = serializers.IntegerField(help_text="The ingest granule's id")
    granule_id = serializers.CharField()
    collection = serializers.CharField(source="collection_key")
    provider = serializers.CharField(source="request.provider.name")
    request = serializers.IntegerField(source="request_id")
    position = serializers.IntegerField()
    disposition = serializers.CharField()
    reason = serializers.CharField()
    failed_at = serializers.DateTimeField(source="updated_at")
    status = serializers.CharField(help_text="Why it stopped and what happens next")
    actions = ActionSerializer(many=True)


class StateCountsSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    states = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="granules per state for the filter, whatever "
                                             "state it asks for")


class ConsoleCopySerializer(serializers.ModelSerializer):
    """A copy with where it lies: on tape (volume, its group and state, the member's position)
    or in the object store (bucket, key, ETag); the other medium's fields are null."""

    medium = serializers.ChoiceField(choices=["tape", "object"], help_text="tape or object "
                                     "(store)")
    volume = serializers.CharField(source="volume.label", allow_null=True)
    volume_group = serializers.CharField(source="volume.group.name", allow_null=True,
                                         default=None)
    volume_state = serializers.CharField(source="volume.state", allow_null=True)
    position = serializers.SerializerMethodField(
        help_text="The member's byte offset on its tape volume, or in its pack (a tar object "
                  "that holds small files); null for an object of its own")
    bucket = serializers.CharField(source="bucket.name", allow_null=True)
    key = serializers.SerializerMethodField(help_text="Object store: the object's key")
    etag = serializers.SerializerMethodField(help_text="Object store: the ETag it answered")
    written_at = serializers.DateTimeField(source="created_at")
    state = serializers.CharField(help_text="written, verified, bad or released")

    class Meta:
        model = FileCopy
        fields = ["id", "copy_number", "segment", "medium", "volume", "volume_group",
                  "volume_state", "position", "bucket", "key", "etag", "length", "state",
                  "written_at", "verified_at"]

    def get_position(self, copy) -> int | None:
        return copy.position if copy.volume_id or copy.data_offset else None

    def get_key(self, copy) -> str | None:
        return copy.key if copy.bucket_id else None

    def get_etag(self, copy) -> str | None:
        return copy.etag if copy.bucket_id else None


class CacheStateSerializer(serializers.ModelSerializer):
    state = serializers.CharField(help_text="staging, dirty, clean or pinned")

    class Meta:
        model = CacheEntry
        fields = ["state", "pinned", "size", "created_at", "last_access", "keep_until"]


class ConsoleFileSerializer(serializers.ModelSerializer):
    cache = CacheStateSerializer(allow_null=True)
    copies = ConsoleCopySerializer(source="copy_rows", many=True)

    class Meta:
        model = File
        fields = ["id", "name", "role", "size", "checksum_type", "checksum", "cache", "copies"]


class GranuleEventSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.ChoiceField(choices=["ingest", "catalog", "cache", "copy", "recall",
                                            "order", "subscription", "audit"])
    text = serializers.CharField()
    actor = serializers.CharField()
    reason = serializers.CharField()


class ConsoleGranulePageSerializer(serializers.Serializer):
    granule = ConsoleGranuleSerializer()
    retired_reason = serializers.CharField(allow_null=True)
    failure = serializers.CharField(allow_null=True, help_text="Why its archive work failed")
    actions = ActionSerializer(many=True, help_text="What can still be done about a failure")
    files = ConsoleFileSerializer(many=True)
    timeline = GranuleEventSerializer(many=True)


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=MAX_REASON, help_text="Why (kept in the audit "
                                   "trail, and told to users whose downloads it stops)")


class DeleteSerializer(ReasonSerializer):
    confirm_granule_id = serializers.CharField(
        max_length=255, help_text="The granule id typed again: a delete cannot be undone")
