"""Bulk jobs over granules, for operators: thin views over console.services.bulk."""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from backend.accounts.permissions import IsOperator
from backend.catalog.pagination import CatalogCursorPagination
from backend.errors import DomainError
from backend.ids import ID_REGEX

from .bulk_serializers import (
    BulkItemSerializer,
    BulkJobDetailSerializer,
    BulkJobSerializer,
    CancelSerializer,
    DryRunSerializer,
    NewBulkJobSerializer,
)
from .models import BulkItem, BulkJob
from .services.bulk import jobs, selection


class ItemPagination(CatalogCursorPagination):
    ordering = "id"


class BulkJobViewSet(viewsets.GenericViewSet, viewsets.mixins.ListModelMixin,
                     viewsets.mixins.RetrieveModelMixin):
    """Bulk jobs, newest first: what was asked, by whom, why, and how far each has got."""

    permission_classes = [IsOperator]
    serializer_class = BulkJobSerializer
    lookup_value_regex = ID_REGEX
    filter_backends = []

    def get_serializer_class(self):
        return BulkJobDetailSerializer if self.action == "retrieve" else BulkJobSerializer

    def get_queryset(self):
        return jobs.with_counts(BulkJob.objects.select_related("target_group", "target_bucket"))

    @extend_schema(request={"application/json": NewBulkJobSerializer,
                            "multipart/form-data": NewBulkJobSerializer},
                   responses={200: DryRunSerializer, 201: BulkJobSerializer})
    def create(self, request):
        """A dry run (`dry_run: true`: how many granules and bytes, which lines are unknown;
        nothing is made) or a job, started at once."""
        form = NewBulkJobSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        kind = data["kind"]
        group = jobs.target_group(kind, data.get("target_group"))
        if "query" in data:
            chosen = selection.by_query(data["query"])
        elif "ids" in data:
            chosen = selection.by_ids(list(enumerate(data["ids"], start=1)))
        else:
            chosen = selection.by_ids(selection.lines_of_upload(data["file"]))
        if data["dry_run"]:
            return Response(jobs.dry_run(kind, chosen))
        job = jobs.create(kind, chosen, by=request.user, reason=data.get("reason"),
                          query=data.get("query"), group=group)
        return Response(self.get_serializer(self.get_queryset().get(pk=job.pk)).data,
                        status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[OpenApiParameter(
        "state", enum=BulkItem.State.values, description="Only items in this state")],
        responses=BulkItemSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=ItemPagination)
    def items(self, request, pk=None):
        """The job's granules with each one's state and outcome, in the order given."""
        job = self.get_object()
        items = job.items.all()
        state = request.query_params.get("state")
        if state:
            if state not in BulkItem.State.values:
                raise DomainError(f"unknown state {state[:40]!r}; one of "
                                  + ", ".join(BulkItem.State.values), "state")
            items = items.filter(state=state)
        page = self.paginate_queryset(items)
        return self.get_paginated_response(BulkItemSerializer(page, many=True).data)

    @extend_schema(request=CancelSerializer, responses=BulkJobSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop the job: items not started are cancelled; archive work already queued ends."""
        form = CancelSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        job = jobs.cancel(self.get_object(), by=request.user,
                          reason=form.validated_data.get("reason", ""))
        return Response(self.get_serializer(self.get_queryset().get(pk=job.pk)).data)
