"""Completeness reports for operators: a collection's day, and the worst collections lately."""
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts.permissions import IsOperator
from backend.errors import NotFound
from backend.fields import read_form

from . import completeness, completeness_days
from .models import Collection


class DayQuery(serializers.Serializer):
    collection = serializers.CharField(max_length=120)
    day = serializers.DateField(required=False, help_text="UTC day; today when left out")


class GapSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    missing = serializers.IntegerField(help_text="Expected granules missing in the span")


class LateSerializer(serializers.Serializer):
    granule_id = serializers.CharField()
    temporal_end = serializers.DateTimeField()
    archived_at = serializers.DateTimeField(allow_null=True, help_text="null: not archived yet")
    late_by_seconds = serializers.FloatField()


class DayReportSerializer(serializers.Serializer):
    collection = serializers.CharField()
    day = serializers.DateField()
    cadence_seconds = serializers.IntegerField()
    latency_target_seconds = serializers.IntegerField(allow_null=True)
    expected = serializers.IntegerField(help_text="Slots of one cadence that should be filled")
    received = serializers.IntegerField()
    missing = serializers.IntegerField()
    granules = serializers.IntegerField(help_text="Granules starting in the day")
    gaps = GapSerializer(many=True)
    late_count = serializers.IntegerField(allow_null=True,
                                          help_text="null: the collection has no latency target")
    late = LateSerializer(many=True)


class WorstQuery(serializers.Serializer):
    days = serializers.IntegerField(min_value=1, max_value=completeness.MAX_DAYS, default=7)
    limit = serializers.IntegerField(min_value=1, max_value=100, default=10)


class WorstRowSerializer(serializers.Serializer):
    collection = serializers.CharField()
    title = serializers.CharField()
    expected = serializers.IntegerField()
    received = serializers.IntegerField()
    missing = serializers.IntegerField()
    percent_received = serializers.FloatField(allow_null=True)
    gaps = serializers.IntegerField()
    late_count = serializers.IntegerField(allow_null=True)


class WorstSerializer(serializers.Serializer):
    days = serializers.IntegerField()
    since = serializers.DateTimeField()
    collections = WorstRowSerializer(many=True)


class CompletenessView(APIView):
    """Expected, received and missing granules of a collection's UTC day, its gaps and its
    late granules (archived later than temporal end + latency target, or not yet)."""

    permission_classes = [IsOperator]

    @extend_schema(parameters=[DayQuery], responses=DayReportSerializer)
    def get(self, request):
        query = read_form(DayQuery, request.query_params)
        try:
            collection = Collection.objects.get_by_key(query["collection"])
        except Collection.DoesNotExist as exc:
            raise NotFound(str(exc)) from None
        day = query.get("day") or timezone.now().date()
        return Response(DayReportSerializer(completeness.day_report(collection, day)).data)


class WorstView(APIView):
    """Collections with a cadence, the most missing granules over the last days first."""

    permission_classes = [IsOperator]

    @extend_schema(parameters=[WorstQuery], responses=WorstSerializer)
    def get(self, request):
        query = read_form(WorstQuery, request.query_params)
        return Response(WorstSerializer(completeness_days.worst(**query)).data)
