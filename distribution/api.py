"""The distribution API: cart, orders, links, destinations, subscriptions and downloads."""
import mimetypes

from django.http import FileResponse, HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.accounts.ownership import OwnedViewMixin
from backend.accounts.throttles import SharedThrottle
from backend.catalog.filters import filter_granules
from backend.ids import ID_REGEX
from backend.nudges import send_on_commit

from . import tasks
from .models import Destination, Order, Subscription
from .serializers import (
    AddedMatchingSerializer,
    CartSerializer,
    DestinationSerializer,
    GranuleIdsSerializer,
    LinksSerializer,
    OrderCreateSerializer,
    OrderDetailSerializer,
    OrderSerializer,
    SearchFiltersSerializer,
    SftpKeySerializer,
    SubscriptionApplyResultSerializer,
    SubscriptionApplySerializer,
    SubscriptionDeliverySerializer,
    SubscriptionPreviewResultSerializer,
    SubscriptionPreviewSerializer,
    SubscriptionSerializer,
    cart_body,
)
from .services import cart, destinations, orders, signed_links, subscriptions, transforms
from .services.access import orderable_granules
from .services.downloads import CHUNK, authorize_download, digest_headers, etag, open_download
from .subset_serializers import SubsetEstimateSerializer, SubsetPreviewSerializer


def _site(request):
    return request.build_absolute_uri("/")


class CartView(APIView):
    """The granules a user has set aside to order."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=CartSerializer)
    def get(self, request):
        return Response(cart_body(request.user, cart.contents(request.user)))

    @extend_schema(request=GranuleIdsSerializer, responses=CartSerializer)
    def post(self, request):
        body = GranuleIdsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(cart_body(request.user, cart.add_to_cart(
            request.user, body.validated_data["granules"])))

    @extend_schema(responses={200: CartSerializer}, operation_id="cart_clear")
    def delete(self, request):
        return Response(cart_body(request.user, cart.remove_from_cart(request.user)))


class CartMatchingView(APIView):
    """Every granule a search finds into the cart at once, within the order limits: all of
    them, or (over a limit) none, with the count and the limit."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=SearchFiltersSerializer, responses=AddedMatchingSerializer,
                   operation_id="cart_add_matching")
    def post(self, request):
        body = SearchFiltersSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        granules = filter_granules(request, body.validated_data["filters"])
        result = cart.add_matching_to_cart(request.user, granules)
        return Response({"matched": result.matched, "added": result.added,
                         "cart": cart_body(request.user, cart.contents(request.user))})


class CartSubsetView(APIView):
    """What a subset would deliver from the cart (or the granules named): each granule's
    estimated output size, the collections' variables; a 400 for a choice that cannot work,
    before ordering."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=SubsetPreviewSerializer, responses=SubsetEstimateSerializer,
                   operation_id="cart_subset_estimate")
    def post(self, request):
        body = SubsetPreviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        ids = body.validated_data.get("granules")
        granules = (orderable_granules(request.user, ids) if ids is not None
                    else [i.granule for i in cart.cart(request.user)])
        return Response(SubsetEstimateSerializer(
            transforms.preview(granules, body.validated_data.get("subset"))).data)


class CartGranuleView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: CartSerializer}, operation_id="cart_remove")
    def delete(self, request, granule):
        return Response(cart_body(request.user,
                                  cart.remove_from_cart(request.user, [granule])))


class OrderViewSet(OwnedViewMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                   viewsets.GenericViewSet):
    """Orders: the caller's own; operators see and cancel everyone's."""

    permission_classes = [IsAuthenticated]
    serializer_class = OrderSerializer
    lookup_value_regex = ID_REGEX
    queryset = Order.objects.none()
    filterset_fields = ["state", "delivery"]
    noun = "order"

    def owned_queryset(self):
        qs = Order.objects.select_related("user", "destination")
        # the list counts each order's items; a page, links and script read their own
        return qs.prefetch_related("items") if self.action == "list" else qs

    def get_serializer_class(self):
        return OrderDetailSerializer if self.action == "retrieve" else OrderSerializer

    @extend_schema(request=OrderCreateSerializer, responses={201: OrderDetailSerializer})
    def create(self, request):
        body = OrderCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        order = orders.create_order(
            request.user, data.get("granules"), data["delivery"],
            destinations.destination_of(request.user, data.get("destination")),
            subset=data.get("subset"),
        )
        return Response(OrderDetailSerializer(self.get_queryset().get(pk=order.pk)).data,
                        status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=OrderSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk):
        order = orders.cancel_order(request.user, pk)
        return Response(OrderSerializer(order).data)

    @extend_schema(responses=LinksSerializer)
    @action(detail=True, methods=["get"])
    def links(self, request, pk):
        return Response(LinksSerializer(signed_links.links(self.get_object(), _site(request))).data)

    @extend_schema(responses={(200, "text/x-python"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"])
    def script(self, request, pk):
        """The order's download script: granary-get (Python 3, standard library only) with
        the order's links inside. It resumes, retries, waits for files still staged, checks
        every checksum and writes a manifest listing each file's outcome."""
        order = self.get_object()
        response = HttpResponse(signed_links.download_script(order, _site(request)),
                                content_type="text/x-python; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="granary-order-{order.pk}.py"'
        return response


class GranaryGetView(APIView):
    """granary-get, the standalone downloader: `python3 granary-get ORDER_ID --server URL
    --token TOKEN` (or the order's links URL)."""

    permission_classes = [AllowAny]

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(responses={(200, "text/x-python"): OpenApiTypes.STR})
    def get(self, request):
        response = HttpResponse(signed_links.client_source(),
                                content_type="text/x-python; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="granary-get"'
        return response


class DownloadThrottle(SharedThrottle):
    """Downloads per client (address, or user) and GRANARY_DOWNLOAD_RATE: beyond it a 429
    with Retry-After, which granary-get waits out; counted for all processes at once."""


class DestinationViewSet(OwnedViewMixin, viewsets.ModelViewSet):
    """Where push orders and subscriptions copy into: folders under the outbox, or SFTP
    servers Granary logs in to with its own key (see sftp-key)."""

    permission_classes = [IsAuthenticated]
    serializer_class = DestinationSerializer
    lookup_value_regex = ID_REGEX
    pagination_class = None
    queryset = Destination.objects.none()
    noun = "destination"

    def owned_queryset(self):
        return Destination.objects.select_related("user")

    def perform_create(self, serializer):
        serializer.save(user=self.request.user)

    def perform_destroy(self, instance):
        destinations.delete_destination(instance)

    @extend_schema(responses=SftpKeySerializer)
    @action(detail=False, methods=["get"], url_path="sftp-key")
    def sftp_key(self, request):
        """Granary's public key: add it to authorized_keys on an SFTP destination's server."""
        return Response(SftpKeySerializer(destinations.sftp_key()).data)


class SubscriptionViewSet(OwnedViewMixin, viewsets.ModelViewSet):
    """Standing filters; matching granules are delivered once each when archived."""

    permission_classes = [IsAuthenticated]
    serializer_class = SubscriptionSerializer
    lookup_value_regex = ID_REGEX
    queryset = Subscription.objects.none()
    noun = "subscription"

    def owned_queryset(self):
        return Subscription.objects.select_related("user", "destination").prefetch_related(
            "collections")

    def perform_destroy(self, instance):
        subscriptions.delete_subscription(instance)

    @extend_schema(request=SubscriptionPreviewSerializer,
                   responses=SubscriptionPreviewResultSerializer)
    @action(detail=False, methods=["post"])
    def preview(self, request):
        """How many granules of the last N days (default 30) a filter would have delivered."""
        body = SubscriptionPreviewSerializer(data=request.data, context={"request": request})
        body.is_valid(raise_exception=True)
        data = body.validated_data
        box, shape = data.get("bbox"), data.get("intersects")
        result = subscriptions.preview_subscription(
            request.user, [subscriptions.collection_by_key(request.user, k)
                           for k in data["collections"]],
            bbox=box.as_list() if box else None, shape=shape,
            start=data.get("start"), end=data.get("end"),
            conditions=data.get("conditions") or [], new_versions=data.get("new_versions", False),
            days=data["days"])
        return Response(SubscriptionPreviewResultSerializer(result).data)

    @extend_schema(request=SubscriptionApplySerializer,
                   responses={202: SubscriptionApplyResultSerializer})
    @action(detail=True, methods=["post"])
    def apply(self, request, pk):
        subscription = self.get_object()
        body = SubscriptionApplySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        since = body.validated_data["since"]
        send_on_commit(tasks.apply_subscription, subscription.pk, since.isoformat())
        return Response({"detail": f"Granules archived since {since:%Y-%m-%d %H:%M} UTC that "
                                   "match are being delivered.", "since": since},
                        status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses=SubscriptionDeliverySerializer(many=True))
    @action(detail=True, methods=["get"])
    def deliveries(self, request, pk):
        subscription = self.get_object()
        page = self.paginate_queryset(
            subscription.deliveries.select_related("granule__collection").order_by("-id"))
        return self.get_paginated_response(SubscriptionDeliverySerializer(page, many=True).data)


class DownloadView(APIView):
    """A file's bytes: by a signed order link, or to a logged-in user who may see it.

    Streams from the cache (by sendfile under gunicorn, see services.downloads.DownloadBody),
    sends a strong ETag and the catalog checksum (`Digest`, `X-Checksum-*`), and answers a
    single Range with 206 and its Content-Range; a range that selects no byte with 416
    (`Content-Range: bytes */SIZE`). Several ranges, a malformed one, or a Range under an
    If-Range that is not the current ETag get the whole file with 200: never bytes of two
    versions spliced. A signed link of a file still being staged answers 503 with Retry-After;
    of a failed one 410 with the reason.
    """

    permission_classes = [AllowAny]
    throttle_classes = [DownloadThrottle]
    throttle_scope = "download"

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        parameters=[OpenApiParameter(n, str, required=False)
                    for n in ("order", "expires", "sig")],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY,
                   (206, "application/octet-stream"): OpenApiTypes.BINARY},
    )
    def get(self, request, file_id):
        download = authorize_download(request.user, file_id, request.query_params)
        stream, span = open_download(download, request.headers.get("Range"),
                                     request.META.get("gunicorn.socket"),
                                     if_range=request.headers.get("If-Range"))
        file = download.served
        partial = span is not None
        start, end = span or (0, file.size - 1)
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        status = 206 if partial else 200
        # a whole file sent by checked sendfile(2) blocks is an iterator; otherwise a file
        response = (StreamingHttpResponse(stream, status=status, content_type=kind)
                    if stream.sock else FileResponse(stream, status=status, content_type=kind))
        response.block_size = CHUNK
        response["Content-Length"] = str(end - start + 1)
        response["Accept-Ranges"] = "bytes"
        response["ETag"] = etag(file)
        response["Content-Disposition"] = f'attachment; filename="{file.name}"'
        if partial:
            response["Content-Range"] = f"bytes {start}-{end}/{file.size}"
        for name, value in digest_headers(file).items():
            response[name] = value
        return response
