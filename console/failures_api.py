"""The console's failures API (thin over console.services): failures grouped by reason with a
retry per group, and the dead-letter list with replay. Operators only."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from backend.accounts.permissions import IsOperator
from backend.actions import ActionSerializer
from backend.fields import read_form
from backend.ids import IdField

from .services import dead_letter, failures
from .services.redeliver import redeliver_group
from .services.sources import KINDS, WHERE

DEAD_KINDS = dead_letter.KIND_NAMES
MAX_IDS = 10000


class _Filters(serializers.Serializer):
    since = serializers.DateTimeField(required=False, help_text="Failed at or after this time")
    collection = serializers.CharField(required=False, max_length=120,
                                       help_text="A collection key, SHORT_NAME.VERSION")


class GroupFiltersSerializer(_Filters):
    where = serializers.ChoiceField(choices=WHERE, required=False)
    kind = serializers.ChoiceField(choices=KINDS, required=False)


class CollectionCountSerializer(serializers.Serializer):
    key = serializers.CharField()
    count = serializers.IntegerField()


class FailureGroupSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="Names the group to retry it")
    where = serializers.ChoiceField(choices=WHERE)
    kind = serializers.ChoiceField(choices=KINDS)
    pattern = serializers.CharField(help_text="The reason with ids, names and numbers taken out")
    example = serializers.CharField(help_text="The latest full reason of the group")
    count = serializers.IntegerField()
    collections = CollectionCountSerializer(many=True)
    first_seen = serializers.DateTimeField(allow_null=True)
    last_seen = serializers.DateTimeField(allow_null=True)
    actions = ActionSerializer(many=True, help_text="What can be done about the group (judged "
                                                    "on up to 200 of its items), and why not")


class RetryGroupSerializer(serializers.Serializer):
    key = serializers.RegexField(r"^[0-9a-f]{20}$", max_length=20,
                                 error_messages={"invalid": "Not a group key."})
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500)


class NotRetriedSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField()


class RetryGroupResultSerializer(serializers.Serializer):
    key = serializers.CharField()
    where = serializers.CharField()
    kind = serializers.CharField()
    pattern = serializers.CharField()
    matched = serializers.IntegerField()
    retried = serializers.IntegerField()
    not_retried = NotRetriedSerializer(many=True)


class FailureGroupsView(APIView):
    """Failed work across ingest, the archive and distribution, grouped by the pattern of its
    reason, the largest group first."""

    permission_classes = [IsOperator]

    @extend_schema(parameters=[GroupFiltersSerializer],
                   responses=FailureGroupSerializer(many=True))
    def get(self, request):
        filters = read_form(GroupFiltersSerializer, request.query_params)
        groups = failures.failure_groups(**filters)
        return Response(FailureGroupSerializer(groups, many=True).data)


class RetryGroupView(APIView):
    """Send every item of one group round again through its own app's retry."""

    permission_classes = [IsOperator]

    @extend_schema(request=RetryGroupSerializer, responses={202: RetryGroupResultSerializer})
    def post(self, request):
        data = read_form(RetryGroupSerializer, request.data)
        result = failures.retry_group(request.user, data["key"], data.get("reason", ""))
        return Response(RetryGroupResultSerializer(result).data,
                        status=status.HTTP_202_ACCEPTED)


class RedeliverGroupSerializer(RetryGroupSerializer):
    reason = serializers.CharField(max_length=2000, help_text="Why (audited; told to the "
                                   "provider with the request to deliver again)")


class NotRedeliveredSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The granule")
    reason = serializers.CharField()


class RedeliverGroupResultSerializer(serializers.Serializer):
    key = serializers.CharField()
    granules = serializers.IntegerField(help_text="Granules given up, their providers asked "
                                                  "to deliver them again")
    not_redelivered = NotRedeliveredSerializer(many=True)


class RedeliverGroupView(APIView):
    """Give up every granule of a group of failed archive work that only a redelivery can help
    (a file's only copy damaged in the cache): their providers are asked to deliver again."""

    permission_classes = [IsOperator]

    @extend_schema(request=RedeliverGroupSerializer, responses=RedeliverGroupResultSerializer)
    def post(self, request):
        data = read_form(RedeliverGroupSerializer, request.data)
        result = redeliver_group(request.user, data["key"], data["reason"])
        return Response(RedeliverGroupResultSerializer(result).data)


class DeadFiltersSerializer(_Filters):
    kind = serializers.ChoiceField(choices=DEAD_KINDS, required=False)


class DeadPageSerializer(DeadFiltersSerializer):
    limit = serializers.IntegerField(required=False, min_value=1, max_value=500, default=50)
    offset = serializers.IntegerField(required=False, min_value=0, max_value=10**9, default=0)


class DeadLetterSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=DEAD_KINDS)
    id = serializers.IntegerField()
    label = serializers.CharField()
    reason = serializers.CharField()
    attempts = serializers.IntegerField()
    max_attempts = serializers.IntegerField()
    collection = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField(allow_null=True)


class DeadLetterPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = DeadLetterSerializer(many=True)


class DeadIdsSerializer(serializers.Serializer):
    """Ids per kind; a kind not named is left alone."""

    def get_fields(self):
        return {kind: serializers.ListField(child=IdField(), required=False, max_length=MAX_IDS)
                for kind in DEAD_KINDS}

    def to_internal_value(self, data):
        unknown = set(data) - set(DEAD_KINDS) if isinstance(data, dict) else ()
        if unknown:
            raise serializers.ValidationError(
                f"Unknown kinds {sorted(map(str, unknown))[:5]}; use {', '.join(DEAD_KINDS)}.")
        return super().to_internal_value(data)


class ReplaySerializer(DeadFiltersSerializer):
    ids = DeadIdsSerializer(required=False)
    all = serializers.BooleanField(default=False, help_text="Every dead letter the filter keeps")
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500)

    def validate(self, data):
        named = "ids" in data
        filtered = any(k in data for k in ("kind", "since", "collection"))
        if named and (filtered or data["all"]):
            raise serializers.ValidationError("Send ids, or a filter, not both.")
        if not named and not filtered and not data["all"]:
            raise serializers.ValidationError(
                "Name the dead letters: ids per kind, a filter (kind, since, collection), "
                "or all: true.")
        return data


class NotReplayedSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=DEAD_KINDS)
    id = serializers.IntegerField()
    reason = serializers.CharField()


class ReplayResultSerializer(serializers.Serializer):
    replayed = serializers.IntegerField()
    by_kind = serializers.DictField(child=serializers.IntegerField())
    not_replayed = NotReplayedSerializer(many=True)


class DeadLetterView(APIView):
    """Work that used up its retries, each kind newest first; `kind`, `since` and `collection`
    filter, `limit` and `offset` page."""

    permission_classes = [IsOperator]

    @extend_schema(parameters=[DeadPageSerializer], responses=DeadLetterPageSerializer)
    def get(self, request):
        query = read_form(DeadPageSerializer, request.query_params)
        limit, offset = query.pop("limit"), query.pop("offset")
        total, rows = dead_letter.dead_letters(limit=limit, offset=offset, **query)
        url = request.build_absolute_uri()
        later = offset + limit < total
        return Response(DeadLetterPageSerializer({
            "count": total, "results": rows,
            "next": replace_query_param(url, "offset", offset + limit) if later else None,
            "previous": (replace_query_param(url, "offset", max(0, offset - limit))
                         if offset else None),
        }).data)


class ReplayView(APIView):
    """Replay dead letters from a fresh count of attempts: ids per kind, or a filter."""

    permission_classes = [IsOperator]

    @extend_schema(request=ReplaySerializer, responses={202: ReplayResultSerializer})
    def post(self, request):
        data = read_form(ReplaySerializer, request.data)
        data["everything"] = data.pop("all")
        result = dead_letter.replay(request.user, **data)
        return Response(ReplayResultSerializer(result).data, status=status.HTTP_202_ACCEPTED)
