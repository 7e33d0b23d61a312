"""Granary's own view of the Tape REST API's stage requests (/api/v1/stage-requests/): who
asked, how many files, their states, ETA and mounts planned; an operator changes a request's
priority, an owner or operator cancels what is left. Thin: services.staging* do the work."""
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from backend.accounts.ownership import OwnedViewMixin
from backend.accounts.permissions import IsOperator

from .models import StageFile, StageRequest
from .services import staging, staging_progress


class StageFileCountsSerializer(serializers.Serializer):
    SUBMITTED = serializers.IntegerField()
    STARTED = serializers.IntegerField()
    COMPLETED = serializers.IntegerField()
    CANCELLED = serializers.IntegerField()
    FAILED = serializers.IntegerField()


class StageRequestSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(read_only=True)
    user = serializers.CharField(source="user.username", read_only=True)
    priority = serializers.ChoiceField(choices=StageRequest.Priority.choices)
    counts = serializers.SerializerMethodField()
    eta_s = serializers.SerializerMethodField()
    volumes_planned = serializers.SerializerMethodField()

    class Meta:
        model = StageRequest
        fields = ["id", "user", "priority", "file_count", "counts", "eta_s", "bound_at",
                  "volumes_planned", "created_at", "started_at", "completed_at"]
        read_only_fields = ["file_count", "bound_at", "created_at", "started_at",
                            "completed_at"]
        extra_kwargs = {"bound_at": {"help_text": "Every file is COMPLETED or FAILED by then"}}

    @extend_schema_field(StageFileCountsSerializer)
    def get_counts(self, stage) -> dict:
        known = self.context.get("counts", {}).get(stage.pk)
        if known is None:
            known = staging_progress.state_counts([stage.pk]).get(stage.pk, {})
        return {state: known.get(state, 0) for state in StageFile.State.values}

    def get_eta_s(self, stage) -> float | None:
        return None if stage.completed_at else staging_progress.eta_s(stage.pk)

    def get_volumes_planned(self, stage) -> int:
        return 0 if stage.completed_at else staging_progress.volumes_planned(stage.pk)


class PrioritySerializer(serializers.Serializer):
    priority = serializers.ChoiceField(choices=StageRequest.Priority.choices)


class StageRequestViewSet(OwnedViewMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                          viewsets.GenericViewSet):
    """Stage requests: the caller's own; operators see all, reprioritise and cancel them."""

    permission_classes = [IsAuthenticated]
    serializer_class = StageRequestSerializer
    queryset = StageRequest.objects.none()
    lookup_value_regex = "[0-9a-fA-F-]{32,36}"
    noun = "stage request"

    def owned_queryset(self):
        return StageRequest.objects.select_related("user")

    def get_serializer_context(self):
        context = super().get_serializer_context()
        page = getattr(self, "_page_ids", None)
        if page:
            context["counts"] = staging_progress.state_counts(page)
        return context

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        self._page_ids = [s.pk for s in (page or [])]
        return page

    def get_object(self):
        return staging.get_stage(self.request.user, self.kwargs["pk"])

    @extend_schema(request=PrioritySerializer, responses=StageRequestSerializer)
    @action(detail=True, methods=["post"], permission_classes=[IsOperator])
    def priority(self, request, pk):
        body = PrioritySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        stage = staging.set_priority(request.user, pk, body.validated_data["priority"])
        return Response(StageRequestSerializer(stage).data)

    @extend_schema(request=None, responses=StageRequestSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk):
        stage = staging_progress.cancel_all(request.user, pk)
        return Response(StageRequestSerializer(stage).data)
