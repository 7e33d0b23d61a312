"""Operators' configuration of collections with their archive policy, under
/api/v1/config/collections/ (the public collection pages read /api/v1/collections/). Thin: the
checks and the audit record are services.configure's and catalog.configure's."""
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts.permissions import IsOperator
from backend.catalog import cadence
from backend.catalog.configure import FIELDS, MAX_APPROVED_USERS, MAX_PATTERNS, snapshot
from backend.catalog.models import Collection
from backend.catalog.serializers import VariableSerializer
from backend.errors import NotFound
from backend.fields import WholeNumberField

from .services import configure, shares

LONGITUDE = {"min_value": -180.0, "max_value": 180.0, "allow_null": True, "required": False}
LATITUDE = {"min_value": -90.0, "max_value": 90.0, "allow_null": True, "required": False}
TEXT = {"allow_blank": True, "required": False}


class PolicySerializer(serializers.Serializer):
    copies = serializers.ListField(
        child=serializers.CharField(max_length=60), min_length=1, max_length=configure.MAX_COPIES,
        help_text="Copy target of each copy, copy 1 first: a volume group (tape) or a bucket "
                  "(object store)")
    cache_residency_days = serializers.IntegerField(
        min_value=0, max_value=configure.MAX_RESIDENCY_DAYS, default=0)


class CollectionConfigSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    key = serializers.CharField(read_only=True)
    short_name = serializers.CharField(max_length=80, validators=[RegexValidator(
        r"^[A-Za-z0-9_-]+$", "letters, digits, - and _ (the key is SHORT.VERSION)")])
    version = serializers.CharField(max_length=20, validators=[RegexValidator(
        r"^[A-Za-z0-9._-]+$", "letters, digits, ., - and _")])
    title = serializers.CharField(max_length=300)
    description = serializers.CharField(max_length=20000, **TEXT)
    processing_level = serializers.CharField(max_length=10, **TEXT)
    platform = serializers.CharField(max_length=80, **TEXT)
    instrument = serializers.CharField(max_length=80, **TEXT)
    doi = serializers.CharField(max_length=100, **TEXT)
    citation = serializers.CharField(max_length=5000, **TEXT)
    variables = VariableSerializer(many=True, required=False, max_length=500)
    extent_west = serializers.FloatField(**LONGITUDE)
    extent_south = serializers.FloatField(**LATITUDE)
    extent_east = serializers.FloatField(**LONGITUDE)
    extent_north = serializers.FloatField(**LATITUDE)
    extent_start = serializers.DateTimeField(allow_null=True, required=False)
    extent_end = serializers.DateTimeField(allow_null=True, required=False)
    access = serializers.ChoiceField(choices=Collection.Access.choices, required=False)
    file_patterns = serializers.ListField(
        child=serializers.JSONField(), max_length=MAX_PATTERNS, required=False,
        help_text="Regular expressions (or {regex, role, required}); group 'granule' is the id")
    duplicate_policy = serializers.ChoiceField(choices=Collection.DuplicatePolicy.choices,
                                               required=False)
    cadence_seconds = serializers.IntegerField(
        min_value=cadence.MIN_CADENCE_S, max_value=cadence.MAX_CADENCE_S, allow_null=True,
        required=False, help_text="One granule expected every this many seconds")
    latency_target_seconds = serializers.IntegerField(
        min_value=0, max_value=cadence.MAX_LATENCY_S, allow_null=True, required=False,
        help_text="Archived within this many seconds of its temporal end")
    approved_users = serializers.ListField(
        child=serializers.CharField(max_length=150), max_length=MAX_APPROVED_USERS,
        required=False)
    policy = PolicySerializer(required=False)
    providers = serializers.ListField(child=serializers.CharField(), read_only=True,
                                      help_text="Providers that may deliver it")
    reason = serializers.CharField(max_length=2000, write_only=True, **TEXT)

    def to_representation(self, collection):
        return {"id": collection.pk, "key": collection.key, **snapshot(collection),
                "policy": configure.policy_of(collection),
                "providers": sorted(p.name for p in collection.providers.all())}


def _save(request, collection, form):
    data = dict(form.validated_data)
    policy = data.pop("policy", None)
    values = {k: v for k, v in data.items() if k in FIELDS}
    if "variables" in values:
        values["variables"] = [dict(v) for v in values["variables"]]
    return configure.configure_collection(
        request.user, collection, values, policy=policy,
        approved_users=data.get("approved_users"), reason=data.get("reason", ""))


class CollectionConfigListView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses=CollectionConfigSerializer(many=True))
    def get(self, request):
        found = Collection.objects.prefetch_related("approved_users", "providers")
        return Response(CollectionConfigSerializer(found, many=True).data)

    @extend_schema(request=CollectionConfigSerializer,
                   responses={201: CollectionConfigSerializer})
    def post(self, request):
        form = CollectionConfigSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        collection = _save(request, None, form)
        return Response(CollectionConfigSerializer(collection).data,
                        status=status.HTTP_201_CREATED)


class CollectionConfigDetailView(APIView):
    permission_classes = [IsOperator]

    def _collection(self, key):
        try:
            return Collection.objects.get_by_key(key)
        except Collection.DoesNotExist as exc:
            raise NotFound(str(exc)) from None

    @extend_schema(responses=CollectionConfigSerializer)
    def get(self, request, key):
        return Response(CollectionConfigSerializer(self._collection(key)).data)

    @extend_schema(request=CollectionConfigSerializer, responses=CollectionConfigSerializer)
    def patch(self, request, key):
        collection = self._collection(key)
        form = CollectionConfigSerializer(data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        collection = _save(request, collection, form)
        return Response(CollectionConfigSerializer(collection).data)


class RecallShareSerializer(serializers.Serializer):
    kind = serializers.CharField(read_only=True, help_text="'' is the other recalls")
    label = serializers.CharField(read_only=True)
    weight = serializers.IntegerField(read_only=True)
    set = serializers.BooleanField(read_only=True, help_text="false: unset, weighs 1")
    served = serializers.IntegerField(read_only=True,
                                      help_text="Recalls running or done in the window")


class RecallSharesUpdateSerializer(serializers.Serializer):
    weights = serializers.DictField(child=WholeNumberField(
        min_value=1, max_value=shares.MAX_WEIGHT), allow_empty=False, help_text="{kind: weight}")
    reason = serializers.CharField(max_length=2000, required=False, allow_blank=True)

    def validate_weights(self, value):
        unknown = sorted(str(kind)[:40] for kind in value if kind not in shares.KINDS)
        if unknown:
            raise serializers.ValidationError(
                f"Unknown kinds {unknown[:10]}{' ...' if len(unknown) > 10 else ''}; the kinds "
                f"are {sorted(shares.KINDS)}.")
        return value


class RecallSharesView(APIView):
    """The fair share of drives between kinds of recall: an operator's weights (audited)."""

    permission_classes = [IsOperator]

    @extend_schema(responses=RecallShareSerializer(many=True))
    def get(self, request):
        return Response(RecallShareSerializer(shares.shares_board(), many=True).data)

    @extend_schema(request=RecallSharesUpdateSerializer,
                   responses=RecallShareSerializer(many=True))
    def put(self, request):
        form = RecallSharesUpdateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        board = shares.set_weights(request.user, form.validated_data)
        return Response(RecallShareSerializer(board, many=True).data)
