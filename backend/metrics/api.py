"""Dashboard figures for operators: thin views over metrics.services."""
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts.permissions import IsOperator
from backend.api import FirstRenderer
from backend.fields import read_form

from . import services
from .exposition import scrape


class _Window(serializers.Serializer):
    days = serializers.IntegerField(min_value=1, max_value=366, default=30)
    hours = serializers.IntegerField(min_value=1, max_value=24 * 14, default=48)


class TodayDirectionSerializer(serializers.Serializer):
    bytes = serializers.IntegerField(help_text="So far today")
    rate_b_s = serializers.FloatField(help_text="Over the last five minutes")
    projected_bytes = serializers.IntegerField(help_text="At the end of the day at that rate")
    target_bytes = serializers.IntegerField()
    surplus_bytes = serializers.IntegerField(help_text="Projected minus target (negative: short)")
    percent_of_target = serializers.FloatField(allow_null=True)


class TodayDirectionsSerializer(serializers.Serializer):
    ingest = TodayDirectionSerializer()
    distribution = TodayDirectionSerializer()


class TodaySerializer(serializers.Serializer):
    """Documentation of services.today()."""

    date = serializers.DateField()
    now = serializers.DateTimeField()
    seconds_left = serializers.IntegerField()
    directions = TodayDirectionsSerializer()


class ChartedBytesSerializer(serializers.Serializer):
    ingest = serializers.IntegerField()
    distribution = serializers.IntegerField()


class DailyRowSerializer(ChartedBytesSerializer):
    date = serializers.DateField()


class DailySerializer(serializers.Serializer):
    """Documentation of services.daily(): bytes per UTC day and the targets in bytes."""

    targets = ChartedBytesSerializer()
    days = DailyRowSerializer(many=True)


class ThroughputSerializer(serializers.Serializer):
    """Documentation of services.throughput(): MB/s per hour (UTC hour starts); the current
    hour's over the part of it gone by."""

    hours = serializers.ListField(child=serializers.DateTimeField())
    by_direction = serializers.DictField(child=serializers.ListField(
        child=serializers.FloatField()))
    by_collection = serializers.DictField(child=serializers.ListField(
        child=serializers.FloatField()))


MAX_TB_PER_DAY = 100_000


class TbPerDayField(serializers.FloatField):
    """0..100,000 TB (100 PB) a day: far above any archive's, and a figure whose bytes fit.
    A JSON true or false is no figure (DRF's FloatField read false as 0)."""

    def __init__(self, **kwargs):
        super().__init__(min_value=0, max_value=MAX_TB_PER_DAY, required=False,
                         help_text="TB per day, 0..100000", **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class TargetsSerializer(serializers.Serializer):
    ingest = TbPerDayField()
    distribution = TbPerDayField()


class DailyTargetsSerializer(serializers.Serializer):
    """The targets as GET and PUT answer them: always both directions."""

    ingest = serializers.FloatField(help_text="TB per day")
    distribution = serializers.FloatField(help_text="TB per day")


class TodayView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses=TodaySerializer)
    def get(self, request):
        return Response(services.today())


class DailyView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses=DailySerializer)
    def get(self, request):
        window = read_form(_Window, request.query_params)
        return Response(services.daily(window["days"]))


class ThroughputView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses=ThroughputSerializer)
    def get(self, request):
        window = read_form(_Window, request.query_params)
        return Response(services.throughput(window["hours"]))


class TargetsView(APIView):
    """Daily targets in TB; operators change them with PUT."""

    permission_classes = [IsOperator]

    @extend_schema(responses=DailyTargetsSerializer)
    def get(self, request):
        return Response({d: t.terabytes for d, t in services.targets().items()})

    @extend_schema(request=TargetsSerializer, responses=DailyTargetsSerializer)
    def put(self, request):
        form = TargetsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        for direction, terabytes in form.validated_data.items():
            services.set_target(direction, terabytes)
        return Response({d: t.terabytes for d, t in services.targets().items()})


class PrometheusView(APIView):
    """Prometheus text format, for operators and their scraper (with an operator's token:
    `authorization: {type: Token, credentials: ...}` in the scrape config)."""

    permission_classes = [IsOperator]

    renderer_classes = [JSONRenderer]   # for refusals; the scrape is written as it is
    content_negotiation_class = FirstRenderer   # any Accept: text/plain;version=0.0.4 too

    @extend_schema(exclude=True)
    def get(self, request):
        body, content_type = scrape(request.headers.get("Accept", ""))
        return HttpResponse(body, content_type=content_type)
