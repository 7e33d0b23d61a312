"""Operator API of the archive tier: thin views over operations.py."""
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts.permissions import IsOperator
from backend.catalog.models import File
from backend.catalog.pagination import CatalogCursorPagination
from backend.ids import ID_REGEX

from . import object_board, operations
from .models import (
    ArchiveRequest,
    Bucket,
    Discrepancy,
    Drive,
    DriveModel,
    Reconciliation,
    Silo,
    Volume,
)
from .serializers import (
    REQUEST_VALUES,
    VOLUME_VALUES,
    ArchiveRequestSerializer,
    AuditSerializer,
    BucketBoardSerializer,
    BucketSerializer,
    BulkResultSerializer,
    BulkSerializer,
    CacheEntrySerializer,
    CacheUsageSerializer,
    DiscrepancySerializer,
    DriveSerializer,
    FileCopySerializer,
    LabelVolumesSerializer,
    PinSerializer,
    QueueRowSerializer,
    ReconcileSerializer,
    ReconciliationSerializer,
    ReleasedSerializer,
    ReleaseSerializer,
    RepairResultSerializer,
    RepairSerializer,
    SiloSerializer,
    VaryDriveSerializer,
    VolumeGroupSerializer,
    VolumeSerializer,
    request_rows,
    volume_rows,
)
from .services import reconcile as reconciliation
from .services.cache import cache_usage


class PositionPagination(CatalogCursorPagination):
    """Files on a volume in tape order."""

    ordering = "position"


class OperatorViewSet(viewsets.GenericViewSet):
    permission_classes = [IsOperator]


class SiloViewSet(OperatorViewSet, viewsets.mixins.ListModelMixin):
    queryset = Silo.objects.all()
    serializer_class = SiloSerializer
    pagination_class = None


class VolumeViewSet(OperatorViewSet, viewsets.mixins.ListModelMixin,
                    viewsets.mixins.RetrieveModelMixin):
    """Media by state (`?state=full`), group or silo; files on a volume; label, repack, audit."""

    serializer_class = VolumeSerializer
    lookup_field = "label"
    filterset_fields = ["state", "silo__name", "group__name"]
    ordering_fields = ["label", "end_of_data", "live_bytes"]
    ordering = ["label"]

    def get_queryset(self):
        return Volume.objects.select_related("silo", "group", "media", "drive")

    def list(self, request, *args, **kwargs):
        """The archive board reads every volume, so a page is built from plain rows."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset())
                                      .values(*VOLUME_VALUES))
        return self.get_paginated_response(list(volume_rows(page)))

    @extend_schema(responses=FileCopySerializer(many=True), filters=False)
    @action(detail=True, methods=["get"])
    def files(self, request, label=None):
        copies = operations.files_on_volume(self.get_object())
        paginator = PositionPagination()
        page = paginator.paginate_queryset(copies, request)
        return paginator.get_paginated_response(FileCopySerializer(page, many=True).data)

    @extend_schema(request=LabelVolumesSerializer, responses={201: VolumeSerializer(many=True)})
    @action(detail=False, methods=["post"], pagination_class=None, filter_backends=[])
    def label(self, request):
        """Label `count` scratch volumes PREFIX00001... in a silo; answers them all (a plain
        list, neither paged nor filtered)."""
        form = LabelVolumesSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        media = DriveModel.objects.filter(name=form.validated_data["media"]).first()
        if media is None:
            raise ValidationError({"media": f"no drive model {form.validated_data['media']!r}"})
        volumes = operations.label_volumes(form.validated_data["silo"], media,
                                           form.validated_data["count"],
                                           form.validated_data["prefix"])
        return Response(VolumeSerializer(volumes, many=True).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={202: ArchiveRequestSerializer})
    @action(detail=True, methods=["post"])
    def repack(self, request, label=None):
        job = operations.start_repack(self.get_object(), requested_by=request.user)
        return Response(ArchiveRequestSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=AuditSerializer, responses={202: {"type": "object"}})
    @action(detail=False, methods=["post"], url_path="audit-sample")
    def audit_sample(self, request):
        """Fixity audit of a random sample of all copies."""
        form = AuditSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        queued = operations.start_audit(sample=form.validated_data["sample"],
                                        requested_by=request.user)
        return Response({"queued": queued}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={202: {"type": "object"}})
    @action(detail=True, methods=["post"])
    def audit(self, request, label=None):
        queued = operations.start_audit(volume=self.get_object(), requested_by=request.user)
        return Response({"queued": queued}, status=status.HTTP_202_ACCEPTED)


class VolumeGroupView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses=VolumeGroupSerializer(many=True))
    def get(self, request):
        return Response(operations.volume_groups())


class BucketViewSet(OperatorViewSet, viewsets.mixins.ListModelMixin):
    """Object-store buckets as copy targets; `board/`: each with its figures and health."""

    queryset = Bucket.objects.order_by("name")
    serializer_class = BucketSerializer
    pagination_class = None
    filter_backends = []

    @extend_schema(responses=BucketBoardSerializer(many=True))
    @action(detail=False, methods=["get"])
    def board(self, request):
        """What each bucket holds, its queued and running work, the last hour's puts and gets,
        its failures and whether its store answers (asked with a short timeout)."""
        return Response(BucketBoardSerializer(object_board.bucket_board(), many=True).data)


class DriveViewSet(OperatorViewSet, viewsets.mixins.ListModelMixin,
                   viewsets.mixins.RetrieveModelMixin):
    serializer_class = DriveSerializer
    lookup_field = "name"
    pagination_class = None

    def get_queryset(self):
        return Drive.objects.select_related("silo", "model", "mounted_volume__group")

    @extend_schema(request=VaryDriveSerializer, responses=DriveSerializer)
    @action(detail=True, methods=["post"])
    def vary(self, request, name=None):
        form = VaryDriveSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        drive = operations.vary_drive(self.get_object(), **form.validated_data)
        return Response(DriveSerializer(self.get_queryset().get(pk=drive.pk)).data)


class RequestViewSet(OperatorViewSet, viewsets.mixins.ListModelMixin,
                     viewsets.mixins.RetrieveModelMixin):
    """The request queue with % done; `?state=` and `?kind=` filter, default queued + running."""

    serializer_class = ArchiveRequestSerializer
    lookup_value_regex = ID_REGEX
    filterset_fields = ["kind", "state"]
    ordering = ["priority", "created_at"]
    ordering_fields = ["priority", "created_at"]

    def get_queryset(self):
        if self.action == "list" and "state" not in self.request.query_params:
            return operations.request_queue()
        return ArchiveRequest.objects.select_related("file", "volume_group", "volume", "drive")

    def list(self, request, *args, **kwargs):
        """Built from plain rows: the failures board polls pages of 200."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset())
                                      .values(*REQUEST_VALUES))
        return self.get_paginated_response(list(request_rows(page)))

    @extend_schema(request=BulkSerializer, responses=BulkResultSerializer)
    @action(detail=False, methods=["post"], url_path="bulk")
    def bulk(self, request):
        """Retry failed or cancel queued requests: by id, or all matching kind and state."""
        form = BulkSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        chosen = ArchiveRequest.objects.all()
        if data.get("ids"):
            chosen = chosen.filter(pk__in=data["ids"])
        if data.get("kind"):
            chosen = chosen.filter(kind=data["kind"])
        if data["action"] == "retry":
            count = operations.retry_failed(chosen.filter(state=ArchiveRequest.State.FAILED))
        else:
            count = operations.cancel_queued(chosen.filter(state=ArchiveRequest.State.QUEUED))
        return Response({"action": data["action"], "count": count})

    @extend_schema(request=None, responses=ArchiveRequestSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        job = self.get_object()
        operations.cancel_request(job)
        job.refresh_from_db()
        return Response(ArchiveRequestSerializer(job).data)


class QueueSummaryView(APIView):
    """Migrate, recall, repack and audit work pending per volume group."""

    permission_classes = [IsOperator]

    @extend_schema(responses=QueueRowSerializer(many=True))
    def get(self, request):
        return Response(operations.queue_summary())


class FileStatusView(APIView):
    """Where a file lives: cache state and every copy on its medium (volume and position, or
    bucket and key)."""

    permission_classes = [IsOperator]

    @extend_schema(responses={200: {"type": "object"}})
    def get(self, request, file_id):
        status_ = operations.file_status(get_object_or_404(File, pk=file_id))
        return Response({
            "file": file_id, "name": status_["file"].name, "size": status_["file"].size,
            "cache": CacheEntrySerializer(status_["cache"]).data if status_["cache"] else None,
            "required_copies": status_["required_copies"], "complete": status_["complete"],
            "copies": FileCopySerializer(status_["copies"], many=True).data,
            "requests": ArchiveRequestSerializer(status_["requests"], many=True).data,
        })


def _named_files(ids):
    files = list(File.objects.filter(pk__in=ids).select_related("granule__collection"))
    missing = set(ids) - {f.pk for f in files}
    if missing:
        raise ValidationError({"files": f"no such files: {sorted(missing)}"})
    return files


class PinView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(request=PinSerializer, responses={200: {"type": "object"}})
    def post(self, request):
        form = PinSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        files = _named_files(form.validated_data["files"])
        entries = operations.pin(files, form.validated_data["pinned"])
        return Response({"files": [e.file_id for e in entries],
                         "pinned": form.validated_data["pinned"]})


class ReleaseView(APIView):
    """Drop files' cache copies now; they stay on tape and an order recalls them."""

    permission_classes = [IsOperator]

    @extend_schema(request=ReleaseSerializer, responses=ReleasedSerializer)
    def post(self, request):
        form = ReleaseSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        released = operations.release(_named_files(form.validated_data["files"]))
        return Response({"files": [f.pk for f in released.files],
                         "freed_bytes": released.freed_bytes,
                         "kept": [{"file": f.pk, "reason": reason}
                                  for f, reason in released.kept]})


class CacheView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses=CacheUsageSerializer)
    def get(self, request):
        from django.conf import settings

        usage = cache_usage()
        return Response({
            "capacity_bytes": usage.capacity, "used_bytes": usage.used, "free_bytes": usage.free,
            "dirty_bytes": usage.dirty, "clean_bytes": usage.clean, "pinned_bytes": usage.pinned,
            "staging_bytes": usage.staging,
            "high_watermark": settings.GRANARY_CACHE_HIGH_WATERMARK,
            "low_watermark": settings.GRANARY_CACHE_LOW_WATERMARK,
        })


class ReconciliationViewSet(OperatorViewSet, viewsets.mixins.ListModelMixin,
                            viewsets.mixins.RetrieveModelMixin):
    """Reconciliation runs, newest first, with their discrepancies; run one; repair one's."""

    serializer_class = ReconciliationSerializer
    lookup_value_regex = ID_REGEX
    filter_backends = []

    def get_queryset(self):
        return Reconciliation.objects.select_related("requested_by")

    @extend_schema(request=ReconcileSerializer, responses={202: ReconciliationSerializer})
    def create(self, request):
        """Run a reconciliation in the archive worker: a sample, or everything (full)."""
        form = ReconcileSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        run = reconciliation.start(requested_by=request.user, **form.validated_data)
        return Response(ReconciliationSerializer(run).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=RepairSerializer, responses=RepairResultSerializer)
    @action(detail=True, methods=["post"])
    def repair(self, request, pk=None):
        """Apply the safe repairs of this run's discrepancies (those named, or all)."""
        form = RepairSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        done = reconciliation.repair(self.get_object(), form.validated_data.get("ids"))
        shown = Discrepancy.objects.filter(pk__in=[d.pk for d in done]).select_related(
            "file", "volume").order_by("pk")
        return Response({"repaired": len(done),
                         "discrepancies": DiscrepancySerializer(shown, many=True).data})
