"""The bulk jobs API's documents."""
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .models import BulkItem, BulkJob
from .services.bulk.jobs import outcome_groups

MAX_ID_LINES_HARD = 1_000_000  # past this a body is refused before it is even read as ids


class NewBulkJobSerializer(serializers.Serializer):
    """A job over the operator filter's `query`, a JSON list `ids`, or an uploaded `file`
    (text or CSV, one id per line: a number or COLLECTION.VERSION:GRANULE_ID)."""

    kind = serializers.ChoiceField(choices=BulkJob.Kind.choices)
    query = serializers.DictField(child=serializers.CharField(allow_blank=True, max_length=1000),
                                  required=False, help_text="Filters of the granule list")
    ids = serializers.ListField(child=serializers.JSONField(), required=False,
                                max_length=MAX_ID_LINES_HARD,
                                help_text="Granule ids or COLLECTION.VERSION:GRANULE_ID")
    file = serializers.FileField(required=False, help_text="One id per line (text or CSV)")
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    dry_run = serializers.BooleanField(default=False)
    target_group = serializers.CharField(required=False, allow_blank=True, max_length=100,
                                         help_text="For a move: the volume group or bucket "
                                                   "to write to")

    def validate(self, data):
        given = [k for k in ("query", "ids", "file") if k in data]
        if len(given) != 1:
            raise serializers.ValidationError(
                "give exactly one of query, ids or file" + (f" (got {', '.join(given)})"
                                                            if given else ""))
        return data


class UnknownLineSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    value = serializers.CharField()
    detail = serializers.CharField()


class DryRunSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField()
    kind = serializers.ChoiceField(choices=BulkJob.Kind.choices)
    granules = serializers.IntegerField()
    bytes = serializers.IntegerField()
    unknown = UnknownLineSerializer(many=True, help_text="The first lines naming no granule")
    unknown_count = serializers.IntegerField()
    duplicates = serializers.IntegerField()


class ItemCountsSerializer(serializers.Serializer):
    pending = serializers.IntegerField()
    waiting = serializers.IntegerField()
    done = serializers.IntegerField()
    skipped = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()


class BulkJobSerializer(serializers.ModelSerializer):
    target_group = serializers.CharField(source="target.name", read_only=True, allow_null=True,
                                         help_text="A move's volume group or bucket")
    requested_by = serializers.CharField(source="requested_by_name", read_only=True)
    counts = serializers.SerializerMethodField()
    percent_done = serializers.SerializerMethodField()

    class Meta:
        model = BulkJob
        fields = ["id", "kind", "state", "query", "ids_given", "target_group", "reason",
                  "requested_by", "granules_total", "bytes_total", "counts", "percent_done",
                  "created_at", "started_at", "finished_at", "cancelled_at"]
        read_only_fields = fields

    def get_counts(self, job) -> ItemCountsSerializer:
        return {state: getattr(job, f"n_{state}", 0) for state in BulkItem.State.values}

    def get_percent_done(self, job) -> float:
        """Items final (done, skipped, failed, cancelled) out of all: a recall counts once
        its bytes are in the cache."""
        final = sum(getattr(job, f"n_{state}", 0) for state in BulkItem.FINAL)
        return round(100.0 * final / job.granules_total, 1) if job.granules_total else 100.0


class OutcomeGroupSerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=["skipped", "failed"])
    pattern = serializers.CharField(help_text="The outcome with ids, names and numbers taken out")
    example = serializers.CharField(help_text="One item's outcome in full")
    count = serializers.IntegerField()


class BulkJobDetailSerializer(BulkJobSerializer):
    """A job with why its items were skipped or failed, grouped."""

    outcomes = serializers.SerializerMethodField()

    class Meta(BulkJobSerializer.Meta):
        fields = [*BulkJobSerializer.Meta.fields, "outcomes"]
        read_only_fields = fields

    @extend_schema_field(OutcomeGroupSerializer(many=True))
    def get_outcomes(self, job):
        return outcome_groups(job)


class BulkItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = BulkItem
        fields = ["id", "granule", "label", "bytes", "state", "outcome", "updated_at"]
        read_only_fields = fields


class CancelSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000)
