"""The operator's granule console: a list across providers with the bulk jobs' filter, one
granule's page (files, copies, timeline) and its lifecycle (withdraw, restore, delete)."""
from django.db.models import OuterRef, Subquery
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts.permissions import IsOperator
from backend.archive import services as archive
from backend.catalog.models import Granule
from backend.catalog.pagination import GranuleKeysetPagination
from backend.errors import DomainError, NotFound
from ingest.models import IngestGranule

from .granule_query import FILTER_FIELDS, granules_matching, state_counts
from .granule_serializers import (
    ConsoleGranulePageSerializer,
    ConsoleGranuleSerializer,
    DeleteSerializer,
    ReasonSerializer,
    StateCountsSerializer,
)
from .services.granule_page import granule_page

PageOut = ConsoleGranulePageSerializer
FILTERS = [OpenApiParameter(name, OpenApiTypes.STR, description=text)
           for name, text in FILTER_FIELDS.items()]


def _with_provider(granules):
    """Each granule with the provider that ingested it (its latest ingest row's)."""
    latest = (IngestGranule.objects.filter(catalog_granule=OuterRef("pk"))
              .order_by("-pk").values("request__provider__name")[:1])
    return granules.annotate(provider=Subquery(latest))


class ConsoleGranulesView(GenericAPIView):
    """Granules of every collection, provider and state, as the filter selects them."""

    permission_classes = [IsOperator]
    serializer_class = ConsoleGranuleSerializer
    pagination_class = GranuleKeysetPagination

    @extend_schema(parameters=FILTERS, filters=False, operation_id="console_granules_list",
                   responses=ConsoleGranuleSerializer(many=True))
    def get(self, request):
        granules = _with_provider(granules_matching(request.query_params))
        page = self.paginate_queryset(granules)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class ConsoleGranuleCountsView(APIView):
    """How many granules the filter selects, per state (the list's chips)."""

    permission_classes = [IsOperator]

    @extend_schema(parameters=FILTERS, responses=StateCountsSerializer)
    def get(self, request):
        counts = state_counts(request.query_params)
        return Response({"total": sum(counts.values()), "states": counts})


def _page(pk):
    return ConsoleGranulePageSerializer(granule_page(pk)).data


class ConsoleGranuleView(APIView):
    """One granule: its files, their cache state and copies, and its timeline."""

    permission_classes = [IsOperator]

    @extend_schema(responses=PageOut)
    def get(self, request, pk):
        return Response(_page(pk))


def _granule(pk):
    granule = Granule.objects.filter(pk=pk).first()
    if granule is None:
        raise NotFound(f"There is no granule {pk}.")
    return granule


class _Action(APIView):
    permission_classes = [IsOperator]
    body = ReasonSerializer

    def post(self, request, pk):
        granule = _granule(pk)
        body = self.body(data=request.data)
        body.is_valid(raise_exception=True)
        self.act(granule, request.user, body.validated_data)
        return Response(_page(pk))


@extend_schema_view(post=extend_schema(request=ReasonSerializer, responses=PageOut))
class WithdrawView(_Action):
    """Hide the granule from search, STAC, subscriptions and orders; kept on tape."""

    def act(self, granule, user, data):
        archive.withdraw_granule(granule, by=user, reason=data["reason"])


@extend_schema_view(post=extend_schema(request=ReasonSerializer, responses=PageOut))
class RestoreView(_Action):
    """Publish a withdrawn granule again."""

    def act(self, granule, user, data):
        archive.restore_granule(granule, by=user, reason=data["reason"])


@extend_schema_view(post=extend_schema(request=DeleteSerializer, responses=PageOut))
class DeleteView(_Action):
    """Delete the granule: a tombstone stays; its tape room is reclaimed by a repack. The
    granule id must be typed again."""

    body = DeleteSerializer

    def act(self, granule, user, data):
        if data["confirm_granule_id"] != granule.granule_id:
            raise DomainError(f"type the granule id {granule.granule_id} to confirm the delete",
                              "confirm_granule_id")
        archive.delete_granule(granule, by=user, reason=data["reason"])
