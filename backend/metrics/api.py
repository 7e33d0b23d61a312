"""Dashboard figures for operators: thin views over metrics.services."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts.permissions import IsOperator

from . import services


class _Window(serializers.Serializer):
    days = serializers.IntegerField(min_value=1, max_value=366, default=30)
    hours = serializers.IntegerField(min_value=1, max_value=24 * 14, default=48)


class TargetsSerializer(serializers.Serializer):
    ingest = serializers.FloatField(min_value=0, required=False, help_text="TB per day")
    distribution = serializers.FloatField(min_value=0, required=False, help_text="TB per day")


class TodayView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses={200: {"type": "object"}})
    def get(self, request):
        return Response(services.today())


class DailyView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses={200: {"type": "object"}})
    def get(self, request):
        window = _Window(data=request.query_params)
        window.is_valid(raise_exception=True)
        return Response(services.daily(window.validated_data["days"]))


class ThroughputView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses={200: {"type": "object"}})
    def get(self, request):
        window = _Window(data=request.query_params)
        window.is_valid(raise_exception=True)
        return Response(services.throughput(window.validated_data["hours"]))


class TargetsView(APIView):
    """Daily targets in TB; operators change them with PUT."""

    permission_classes = [IsOperator]

    @extend_schema(responses=TargetsSerializer)
    def get(self, request):
        return Response({d: t.terabytes for d, t in services.targets().items()})

    @extend_schema(request=TargetsSerializer, responses=TargetsSerializer)
    def put(self, request):
        form = TargetsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        for direction, terabytes in form.validated_data.items():
            services.set_target(direction, terabytes)
        return Response({d: t.terabytes for d, t in services.targets().items()})
