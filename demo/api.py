"""What the demo made up: the dashboards say which part of their history is synthetic."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts.permissions import IsOperator

from . import history


class SyntheticHistorySerializer(serializers.Serializer):
    synthetic = serializers.BooleanField(help_text="Whether the demo recorded made-up transfers")
    first_day = serializers.DateField(allow_null=True)
    until = serializers.DateTimeField(allow_null=True,
                                      help_text="Transfers starting before this are synthetic")
    note = serializers.CharField()


class SyntheticHistoryView(APIView):
    """The span of the demo's synthetic transfers (none outside a demo)."""

    permission_classes = [IsOperator]

    @extend_schema(responses=SyntheticHistorySerializer)
    def get(self, request):
        span = history.synthetic_span()
        first, until = span or (None, None)
        return Response(SyntheticHistorySerializer({
            "synthetic": span is not None, "first_day": first, "until": until,
            "note": history.NOTE if span else ""}).data)
