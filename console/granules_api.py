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
from backend.catalog.pagination import CatalogCursorPagination, GranuleKeysetPagination
from backend.errors import DomainError, NotFound
from ingest import services as ingest
from ingest.models import IngestGranule

from .granule_query import (
    FILTER_FIELDS,
    granules_matching,
    ingest_failures_matching,
    state_counts,
)
from .granule_serializers import (
    ConsoleGranulePageSerializer,
    ConsoleGranuleSerializer,
    DeleteSerializer,
    IngestFailureSerializer,
    ReasonSerializer,
    StateCountsSerializer,
)
from .services import stuck
from .services.granule_page import granule_page
from .services.redeliver import redeliver

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
        failed = stuck.failures(page)
        for granule in page:
            granule.failure = failed.get(granule.pk)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class ConsoleIngestFailuresView(GenericAPIView):
    """Granules that failed in ingest before the catalog had them (the failed filter counts
    them), the latest first, with why and what can still be done."""

    permission_classes = [IsOperator]
    serializer_class = IngestFailureSerializer
    pagination_class = CatalogCursorPagination

    @extend_schema(parameters=FILTERS, filters=False,
                   responses=IngestFailureSerializer(many=True))
    def get(self, request):
        page = self.paginate_queryset(ingest_failures_matching(request.query_params))
        told = ingest.explain_failed(page)
        for row in page:
            row.status, row.actions = told[row.pk]["status"], told[row.pk]["actions"]
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


class RedeliverView(APIView):
    """Give up a granule whose only copy of a file is damaged (failed, its work cancelled, its
    copies dropped) and ask its provider to deliver it again: their request says so."""

    permission_classes = [IsOperator]

    @extend_schema(request=ReasonSerializer, responses=PageOut)
    def post(self, request, pk):
        body = ReasonSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        redeliver(request.user, pk, body.validated_data["reason"])
        return Response(_page(pk))


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
