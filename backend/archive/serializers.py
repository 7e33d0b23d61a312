from django.db.models import Count
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from backend.actions import REPAIR, ActionSerializer, can, cannot
from backend.ids import IdField

from .models import (
    ArchiveRequest,
    Bucket,
    CacheEntry,
    Discrepancy,
    Drive,
    FileCopy,
    Reconciliation,
    Silo,
    Volume,
    percent,
)
from .services.remedies import request_actions

_when = serializers.DateTimeField()


class SiloSerializer(serializers.ModelSerializer):
    class Meta:
        model = Silo
        fields = ["id", "name", "robot_exchange_s", "slots"]


class VolumeSerializer(serializers.ModelSerializer):
    silo = serializers.CharField(source="silo.name")
    group = serializers.CharField(source="group.name", allow_null=True, default=None)
    media = serializers.CharField(source="media.name")
    percent_full = serializers.FloatField()
    mounted_on = serializers.SerializerMethodField()

    class Meta:
        model = Volume
        fields = ["label", "silo", "group", "media", "state", "capacity_bytes", "end_of_data",
                  "live_bytes", "file_count", "percent_full", "mount_count",
                  "last_dismounted_at", "mounted_on", "fault", "state_reason"]

    def get_mounted_on(self, volume) -> str | None:
        drive = getattr(volume, "drive", None)
        return drive.name if drive else None


VOLUME_VALUES = ["label", "silo__name", "group__name", "media__name", "state", "capacity_bytes",
                 "end_of_data", "live_bytes", "file_count", "mount_count", "last_dismounted_at",
                 "drive__name", "fault", "state_reason"]


def volume_rows(rows):
    """VolumeSerializer's output from .values(*VOLUME_VALUES) rows: a page of 1,000 volumes
    without building 5,000 model instances."""
    for v in rows:
        yield {
            "label": v["label"], "silo": v["silo__name"], "group": v["group__name"],
            "media": v["media__name"], "state": v["state"], "capacity_bytes": v["capacity_bytes"],
            "end_of_data": v["end_of_data"], "live_bytes": v["live_bytes"],
            "file_count": v["file_count"],
            "percent_full": percent(v["end_of_data"], v["capacity_bytes"]),
            "mount_count": v["mount_count"],
            "last_dismounted_at": _when.to_representation(v["last_dismounted_at"]),
            "mounted_on": v["drive__name"], "fault": v["fault"],
            "state_reason": v["state_reason"],
        }


class DriveSerializer(serializers.ModelSerializer):
    silo = serializers.CharField(source="silo.name")
    model = serializers.CharField(source="model.name")
    mounted_volume = serializers.CharField(source="mounted_volume.label", allow_null=True,
                                           default=None)
    volume_group = serializers.SerializerMethodField()

    class Meta:
        model = Drive
        fields = ["name", "silo", "model", "state", "mode", "mounted_volume", "volume_group",
                  "mounted_at", "last_used_at", "consecutive_errors", "error_count",
                  "last_error", "offline_reason", "current_rate_b_s", "fault"]

    def get_volume_group(self, drive) -> str | None:
        volume = drive.mounted_volume
        return volume.group.name if volume and volume.group else None


class FileCopySerializer(serializers.ModelSerializer):
    """A copy on its medium: a tape volume's member (volume, silo, position) or an object in a
    bucket (bucket, key, ETag); the other medium's fields are null."""

    medium = serializers.ChoiceField(choices=["tape", "object"], help_text="tape or object "
                                     "(store)")
    volume = serializers.CharField(source="volume.label", allow_null=True)
    silo = serializers.CharField(source="volume.silo.name", allow_null=True)
    bucket = serializers.CharField(source="bucket.name", allow_null=True)
    key = serializers.SerializerMethodField(help_text="Object store: the object's key")
    etag = serializers.SerializerMethodField(help_text="Object store: the ETag it answered")
    data_offset = serializers.IntegerField(
        read_only=True, help_text="Where the copy's bytes start: on the volume, or in the object "
        "(a member of a pack of small files; 0: the object holds the file alone)")
    file = serializers.IntegerField(source="file_id")
    file_name = serializers.CharField(source="file.name")
    granule_id = serializers.CharField(source="file.granule.granule_id")

    class Meta:
        model = FileCopy
        fields = ["file", "file_name", "granule_id", "copy_number", "segment", "file_offset",
                  "medium", "volume", "silo", "position", "data_offset", "bucket", "key", "etag",
                  "length",
                  "checksum_type", "checksum", "state", "verified_at"]

    def get_key(self, copy) -> str | None:
        return copy.key if copy.bucket_id else None

    def get_etag(self, copy) -> str | None:
        return copy.etag if copy.bucket_id else None


class CacheEntrySerializer(serializers.ModelSerializer):
    class Meta:
        model = CacheEntry
        fields = ["state", "pinned", "size", "last_access", "keep_until"]


class ArchiveRequestSerializer(serializers.ModelSerializer):
    file_name = serializers.CharField(source="file.name", allow_null=True, default=None)
    volume_group = serializers.CharField(source="volume_group.name", allow_null=True,
                                         default=None)
    volume = serializers.CharField(source="volume.label", allow_null=True, default=None)
    bucket = serializers.CharField(source="bucket.name", allow_null=True, default=None,
                                   help_text="Object-store work: the bucket written or read")
    drive = serializers.CharField(source="drive.name", allow_null=True, default=None)
    percent_done = serializers.FloatField()
    actions = serializers.SerializerMethodField(help_text="What can still be done about a "
                                                "failed request, and why not")

    class Meta:
        model = ArchiveRequest
        fields = ["id", "kind", "state", "priority", "file", "file_name", "copy_number",
                  "volume_group", "volume", "bucket", "drive", "bytes_total", "bytes_done",
                  "percent_done", "attempts", "error", "actions", "created_at", "started_at",
                  "finished_at"]

    @extend_schema_field(ActionSerializer(many=True))
    def get_actions(self, obj):
        name = obj.file.name if obj.file_id else None
        return request_actions([(obj.pk, obj.state, obj.file_id, name)])[obj.pk]


REQUEST_VALUES = ["id", "kind", "state", "priority", "file", "file__name", "copy_number",
                  "volume_group__name", "volume__label", "bucket__name", "drive__name",
                  "bytes_total", "bytes_done", "attempts", "error", "created_at", "started_at",
                  "finished_at"]


def request_rows(rows):
    """ArchiveRequestSerializer's output from .values(*REQUEST_VALUES) rows (request lists),
    each with the actions that can still succeed."""
    actions = request_actions([(r["id"], r["state"], r["file"], r["file__name"]) for r in rows])
    for r in rows:
        yield {
            "actions": actions[r["id"]],
            "id": r["id"], "kind": r["kind"], "state": r["state"], "priority": r["priority"],
            "file": r["file"], "file_name": r["file__name"], "copy_number": r["copy_number"],
            "volume_group": r["volume_group__name"], "volume": r["volume__label"],
            "bucket": r["bucket__name"], "drive": r["drive__name"], "bytes_total": r["bytes_total"],
            "bytes_done": r["bytes_done"], "percent_done": percent(r["bytes_done"],
                                                                   r["bytes_total"]),
            "attempts": r["attempts"], "error": r["error"],
            "created_at": _when.to_representation(r["created_at"]),
            "started_at": _when.to_representation(r["started_at"]),
            "finished_at": _when.to_representation(r["finished_at"]),
        }


class VaryDriveSerializer(serializers.Serializer):
    online = serializers.BooleanField()
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class LabelVolumesSerializer(serializers.Serializer):
    silo = serializers.SlugRelatedField(slug_field="name", queryset=Silo.objects.all())
    media = serializers.CharField(help_text="Drive model name")
    count = serializers.IntegerField(min_value=1, max_value=1000)
    prefix = serializers.RegexField(r"^[A-Z][A-Z0-9]{0,3}$",
                                    help_text="1-4 capitals/digits, e.g. C")


BULK_ACTIONS = ["retry", "cancel"]


class BulkSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=BULK_ACTIONS)
    ids = serializers.ListField(child=IdField(), required=False, max_length=10000)
    kind = serializers.ChoiceField(choices=ArchiveRequest.Kind.choices, required=False)
    all = serializers.BooleanField(default=False, help_text="Everything matching kind")

    def validate(self, data):
        if not data.get("ids") and not data.get("all"):
            raise serializers.ValidationError("name the requests (ids) or ask for all")
        return data


class AuditSerializer(serializers.Serializer):
    sample = serializers.IntegerField(min_value=1, max_value=1_000_000,
                                      help_text="Copies to audit, drawn at random")


class ReleaseSerializer(serializers.Serializer):
    files = serializers.ListField(child=IdField(), min_length=1, max_length=10000)


class _KeptSerializer(serializers.Serializer):
    file = serializers.IntegerField()
    reason = serializers.CharField(help_text="Why the cache keeps it (as the purge would)")


class ReleasedSerializer(serializers.Serializer):
    """What a release did: each file on its own, the kept ones with their reason."""

    files = serializers.ListField(child=serializers.IntegerField(), help_text="Released")
    freed_bytes = serializers.IntegerField()
    kept = _KeptSerializer(many=True)


class PinSerializer(ReleaseSerializer):
    pinned = serializers.BooleanField(default=True)


class BulkResultSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=BULK_ACTIONS)
    count = serializers.IntegerField(help_text="Requests retried or cancelled")


class CacheUsageSerializer(serializers.Serializer):
    """The RAID cache in bytes and its watermarks as fractions (documentation of CacheView)."""

    capacity_bytes = serializers.IntegerField()
    used_bytes = serializers.IntegerField()
    free_bytes = serializers.IntegerField()
    dirty_bytes = serializers.IntegerField()
    clean_bytes = serializers.IntegerField()
    pinned_bytes = serializers.IntegerField()
    staging_bytes = serializers.IntegerField()
    high_watermark = serializers.FloatField()
    low_watermark = serializers.FloatField()


class QueueRowSerializer(serializers.Serializer):
    """Pending work of one kind for one volume group (documentation of queue_summary)."""

    kind = serializers.ChoiceField(choices=ArchiveRequest.Kind.choices)
    volume_group = serializers.CharField(allow_null=True)
    queued = serializers.IntegerField()
    queued_bytes = serializers.IntegerField()
    running = serializers.IntegerField()
    running_bytes = serializers.IntegerField()
    running_done_bytes = serializers.IntegerField()
    oldest_at = serializers.DateTimeField()
    oldest_age_s = serializers.FloatField()
    running_percent_done = serializers.FloatField(allow_null=True)


class VolumeGroupSerializer(serializers.Serializer):
    """A volume group's volumes, capacity and use (documentation of volume_groups)."""

    name = serializers.CharField()
    role = serializers.CharField(help_text="primary or backup copy")
    silo = serializers.CharField(allow_null=True)
    volumes = serializers.IntegerField()
    capacity_bytes = serializers.IntegerField()
    used_bytes = serializers.IntegerField()
    live_bytes = serializers.IntegerField()
    percent_full = serializers.FloatField()


class BucketSerializer(serializers.ModelSerializer):
    """A bucket of an object store as a copy target, beside the volume groups."""

    medium = serializers.SerializerMethodField(help_text="Always object: policies name buckets "
                                               "and volume groups alike")

    class Meta:
        model = Bucket
        fields = ["name", "medium", "store", "bucket", "prefix", "created_at"]
        read_only_fields = fields

    def get_medium(self, bucket) -> str:
        return bucket.medium


class BucketWorkSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="migrate (puts) or recall (gets)")
    queued = serializers.IntegerField()
    queued_bytes = serializers.IntegerField()
    running = serializers.IntegerField()
    running_bytes = serializers.IntegerField()


class BucketTransfersSerializer(serializers.Serializer):
    puts = serializers.IntegerField(help_text="Migrations to the bucket done")
    put_bytes = serializers.IntegerField()
    gets = serializers.IntegerField(help_text="Recalls the bucket served")
    get_bytes = serializers.IntegerField()


class BucketFailuresSerializer(serializers.Serializer):
    requests = serializers.IntegerField(
        help_text="Object work failed, or queued again with an error (the store was down)")
    last_error = serializers.CharField(help_text="The latest error ('' when none)")
    last_error_at = serializers.DateTimeField(allow_null=True)


class BucketHealthSerializer(serializers.Serializer):
    ok = serializers.BooleanField(help_text="The store answered for the bucket just now")
    reason = serializers.CharField(help_text="Why not ('' when it did)")


class BucketBoardSerializer(serializers.Serializer):
    """A bucket on the archive board (documentation of object_board.bucket_board)."""

    name = serializers.CharField()
    store = serializers.CharField()
    bucket = serializers.CharField()
    prefix = serializers.CharField()
    objects = serializers.IntegerField(help_text="Verified copies it holds")
    bytes = serializers.IntegerField(help_text="Bytes of those copies")
    work = BucketWorkSerializer(many=True, help_text="Queued and running object work per kind")
    last_hour = BucketTransfersSerializer(help_text="Puts and gets finished in the last hour")
    failures = BucketFailuresSerializer()
    health = BucketHealthSerializer()


class DiscrepancySerializer(serializers.ModelSerializer):
    file = serializers.IntegerField(source="file_id", allow_null=True)
    file_name = serializers.CharField(source="file.name", allow_null=True, default=None)
    copy = serializers.IntegerField(source="copy_id", allow_null=True)
    volume = serializers.CharField(source="volume.label", allow_null=True, default=None)
    request = serializers.IntegerField(source="request_id", allow_null=True)
    actions = serializers.SerializerMethodField(help_text="The repair, possible or not and why")

    class Meta:
        model = Discrepancy
        fields = ["id", "kind", "file", "file_name", "copy", "volume", "request", "detail",
                  "repair", "repaired_at", "outcome", "actions"]
        read_only_fields = fields

    @extend_schema_field(ActionSerializer(many=True))
    def get_actions(self, d):
        if d.repair and not d.repaired_at:
            return [can(REPAIR, d.repair)]
        why = (d.extra or {}).get("no_repair")
        return [cannot(REPAIR, why)] if why and not d.repaired_at else []


class KindCountSerializer(serializers.Serializer):
    kind = serializers.CharField()
    count = serializers.IntegerField()
    repaired = serializers.IntegerField()


class PastMemberSerializer(serializers.Serializer):
    """A member past a volume's end of data, as its tar headers name it."""

    name = serializers.CharField()
    position = serializers.IntegerField(help_text="Byte of its first header block")
    size = serializers.IntegerField(help_text="Bytes of data")
    collection = serializers.CharField()
    granule_id = serializers.CharField()
    file = serializers.CharField()
    copy = serializers.CharField()


class NoteSerializer(serializers.Serializer):
    """What a run saw that breaks no promise: told beside the discrepancies, never counted."""

    kind = serializers.CharField(help_text="past_end_of_data: bytes past a volume's end of data")
    message = serializers.CharField()
    volume = serializers.CharField()
    end_of_data = serializers.IntegerField()
    tail_bytes = serializers.IntegerField(help_text="Bytes of the volume past its end of data")
    members = serializers.IntegerField(
        allow_null=True, help_text="Whole members there (null: a sampled run lists none)")
    member_bytes = serializers.IntegerField(allow_null=True, help_text="Their bytes of data")
    listed = PastMemberSerializer(many=True, help_text="The first of them")


# a run lists at most this many of its discrepancies; discrepancy_count and by_kind count all
DISCREPANCIES_SHOWN = 500


class ReconciliationSerializer(serializers.ModelSerializer):
    requested_by = serializers.CharField(source="requested_by.username", allow_null=True,
                                         default=None)
    by_kind = serializers.SerializerMethodField()
    discrepancies = serializers.SerializerMethodField()
    notes = serializers.SerializerMethodField()

    class Meta:
        model = Reconciliation
        fields = ["id", "scope", "sample", "repair", "state", "requested_by", "created_at",
                  "started_at", "finished_at", "volumes_read", "copies_read",
                  "cache_files_read", "discrepancy_count", "error", "by_kind", "discrepancies",
                  "notes"]
        read_only_fields = fields

    @extend_schema_field(NoteSerializer(many=True))
    def get_notes(self, run):
        blank = {"members": None, "member_bytes": None, "listed": []}
        return NoteSerializer([{**blank, **note} for note in run.notes], many=True).data

    @extend_schema_field(KindCountSerializer(many=True))
    def get_by_kind(self, run):
        rows = (run.discrepancies.order_by("kind").values("kind")
                .annotate(count=Count("pk"), repaired=Count("repaired_at")))
        return [{"kind": r["kind"], "count": r["count"], "repaired": r["repaired"]}
                for r in rows]

    @extend_schema_field(DiscrepancySerializer(many=True))
    def get_discrepancies(self, run):
        shown = run.discrepancies.select_related("file", "volume").order_by("pk")
        return DiscrepancySerializer(shown[:DISCREPANCIES_SHOWN], many=True).data


class ReconcileSerializer(serializers.Serializer):
    full = serializers.BooleanField(default=False, help_text="Read every volume and cached file")
    sample = serializers.IntegerField(
        min_value=1, max_value=1_000_000, required=False, allow_null=True,
        help_text="Copies and cached files to read at random (default: the daily sample)")
    repair = serializers.BooleanField(default=False, help_text="Repair what it finds")


class RepairSerializer(serializers.Serializer):
    ids = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
                                required=False,
                                max_length=10000, help_text="Discrepancies to repair (all if none)")


class RepairResultSerializer(serializers.Serializer):
    repaired = serializers.IntegerField()
    discrepancies = DiscrepancySerializer(many=True)
