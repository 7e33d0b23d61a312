"""The ingest API: bulk requests, PDRs and uploads into the staging area (thin over services)."""
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts.ownership import OwnedViewMixin, get_owned
from backend.accounts.permissions import IsProvider
from backend.accounts.services import acting_provider
from backend.parsers import JSONParser, read_body

from .models import IngestGranule, IngestRequest, Pdr
from .serializers import (
    REQUEST_VALUES,
    BulkRequestSerializer,
    IngestRequestSerializer,
    PdrSerializer,
    PdrSubmitSerializer,
    RequestDetailSerializer,
    RetryResultSerializer,
    RetrySerializer,
    granule_rows,
    request_rows,
)
from .services.accept import submit
from .services.explain import explain
from .services.outcome import retry
from .services.pdr_flow import submit_pdr
from .services.reporting import pdrs_visible_to, requests_visible_to, state_counts
from .services.uploads import receive_upload


class PlainTextParser(BaseParser):
    media_type = "text/plain"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = read_body(stream) if stream is not None else b""
        try:
            return raw.decode("ascii")
        except UnicodeDecodeError as exc:
            raise ParseError("A PDR is ASCII text; this body is not.") from exc


def provider_for(request, name=None):
    """The provider a call acts for (named in the body, the query, or implied by the caller)."""
    return acting_provider(request.user, name or request.query_params.get("provider"))


def _check_body_shape(data, key):
    if not isinstance(data, dict):
        raise ValidationError(f"Send a JSON object with {key!r}.")
    if key not in data:
        raise ValidationError({key: "This field is required."})


class RequestListView(generics.ListAPIView):
    """The caller's ingest requests, newest first; POST a bulk request."""

    permission_classes = [IsProvider]
    serializer_class = IngestRequestSerializer

    def get_queryset(self):
        return requests_visible_to(self.request.user).select_related("pdr")

    def list(self, request, *args, **kwargs):
        """Built from plain rows: the operators' failures board polls pages of 200."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset())
                                      .values(*REQUEST_VALUES))
        return self.get_paginated_response(list(request_rows(page, request)))

    @extend_schema(
        request=BulkRequestSerializer, responses={202: IngestRequestSerializer,
                                                  200: IngestRequestSerializer},
        parameters=[OpenApiParameter("Idempotency-Key", OpenApiTypes.STR,
                                     OpenApiParameter.HEADER, required=False)],
    )
    def post(self, request):
        try:
            body = request.data
        except RequestDataTooBig:
            return Response({"detail": "The request body is larger than "
                             f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes; split it into "
                             "smaller requests."}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        _check_body_shape(body, "granules")
        provider = provider_for(request, body.get("provider"))
        key = request.headers.get("Idempotency-Key") or None
        if key and len(key) > 255:
            raise ValidationError("Idempotency-Key is longer than 255 characters.")
        ingest, created = submit(provider, body["granules"], user=request.user,
                                 idempotency_key=key)
        data = IngestRequestSerializer(ingest, context={"request": request}).data
        return Response(data, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK,
                        headers={"Location": data["url"]})


class _OneRequest(APIView):
    permission_classes = [IsProvider]

    def _get(self, request, pk):
        return get_owned(IngestRequest.objects.select_related("provider"), request.user, pk,
                         "ingest request")


class RequestDetailView(_OneRequest):
    """One request: its state, counts per granule state, % done in bytes, and its granules
    (`?state=failed` for some, `?granules=0` for none)."""

    @extend_schema(responses=RequestDetailSerializer, parameters=[
        OpenApiParameter("state", OpenApiTypes.STR, description="Only granules in this state"),
        OpenApiParameter("granules", OpenApiTypes.BOOL, description="0 leaves granules out"),
    ])
    def get(self, request, pk):
        ingest = self._get(request, pk)
        data = IngestRequestSerializer(ingest, context={"request": request}).data
        data["counts"] = state_counts(ingest)
        if request.query_params.get("granules", "1") not in ("0", "false", "no"):
            rows = IngestGranule.objects.filter(request=ingest).order_by("position")
            state = request.query_params.get("state")
            if state:
                if state not in IngestGranule.State.values:
                    raise ValidationError({"state": f"one of {', '.join(IngestGranule.State)}"})
                rows = rows.filter(state=state)
            data["granules"] = explain(ingest, list(granule_rows(rows)))
        return Response(data)


class RetryView(_OneRequest):
    """Send the failed granules of a request (or those at `positions`) round again."""

    @extend_schema(request=RetrySerializer, responses={202: RetryResultSerializer})
    def post(self, request, pk):
        ingest = self._get(request, pk)
        form = RetrySerializer(data=request.data if isinstance(request.data, dict) else {})
        form.is_valid(raise_exception=True)
        count = retry(ingest, form.validated_data.get("positions"))
        ingest.refresh_from_db()
        data = IngestRequestSerializer(ingest, context={"request": request}).data
        data["retried"] = count
        return Response(data, status=status.HTTP_202_ACCEPTED)


class PdrListView(generics.ListAPIView):
    """The caller's PDRs with their answers; POST a PDR (JSON {name, text} or text/plain with
    ?name=)."""

    permission_classes = [IsProvider]
    serializer_class = PdrSerializer
    parser_classes = [JSONParser, PlainTextParser]

    def get_queryset(self):
        return pdrs_visible_to(self.request.user)

    @extend_schema(request=PdrSubmitSerializer, responses={202: PdrSerializer, 200: PdrSerializer,
                                                           400: PdrSerializer})
    def post(self, request):
        if isinstance(request.data, str):
            fields = {"name": request.query_params.get("name", ""), "text": request.data}
        else:
            form = PdrSubmitSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            fields = form.validated_data
        if not fields["name"]:
            raise ValidationError({"name": "Give the PDR's file name (?name=...)."})
        provider = provider_for(request, fields.get("provider"))
        row, created = submit_pdr(provider, fields["name"], fields["text"], user=request.user)
        data = PdrSerializer(row, context={"request": request}).data
        if row.state == Pdr.State.REJECTED:
            data["detail"] = f"The PDR was refused ({row.disposition}): {row.detail}"
            return Response(data, status=status.HTTP_400_BAD_REQUEST)
        return Response(data, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK,
                        headers={"Location": data["url"]})


class PdrDetailView(OwnedViewMixin, generics.RetrieveAPIView):
    permission_classes = [IsProvider]
    serializer_class = PdrSerializer
    noun = "PDR"

    def owned_queryset(self):
        return Pdr.objects.select_related("provider", "request")


class UploadView(APIView):
    """PUT streams the body into the provider's staging area at <path>; the size must match
    Content-Length and, when X-Checksum-Type and X-Checksum are sent, the checksum too."""

    permission_classes = [IsProvider]

    @extend_schema(request={"application/octet-stream": OpenApiTypes.BINARY},
                   responses={201: OpenApiTypes.OBJECT}, parameters=[
        OpenApiParameter("X-Checksum-Type", OpenApiTypes.STR, OpenApiParameter.HEADER),
        OpenApiParameter("X-Checksum", OpenApiTypes.STR, OpenApiParameter.HEADER),
    ])
    def put(self, request, path):
        provider = provider_for(request)
        length = request.headers.get("Content-Length")
        result = receive_upload(provider, path, request._request, length,
                                checksum_type=request.headers.get("X-Checksum-Type"),
                                checksum=request.headers.get("X-Checksum"))
        return Response(result, status=status.HTTP_201_CREATED)

