"""STAC API 1.0 views: thin wrappers over catalog.services and stac_query (queries) and
catalog.stac (JSON).

Every response carries CORS headers so browser STAC clients on other origins can search;
errors are JSON with `detail` (as everywhere in Granary) plus STAC's `code`/`description`.
"""
from django.urls import get_script_prefix, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.api import FirstRenderer
from backend.parsers import JSONParser

from . import services, stac, stac_query, stac_search
from .models import Collection

CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Accept, Authorization, Content-Type",
    "Access-Control-Max-Age": "86400",
}


def _search_parameters():
    def param(name, description):
        return OpenApiParameter(name, OpenApiTypes.STR, description=description)

    return [
        param("bbox", "west,south,east,north (west > east crosses the antimeridian)"),
        param("intersects", "GeoJSON geometry, planar as RFC 7946 says (across 180° cut it "
              "there or write 170 -> 190)"),
        param("datetime", "RFC 3339 instant or interval start/end, '..' for an open end"),
        param("ids", "Item ids (granule ids), comma-separated"),
        param("collections", "Collection ids (SHORT.VERSION), comma-separated"),
        OpenApiParameter("limit", OpenApiTypes.INT, description="1..10000, default 10"),
        param("sortby", "e.g. -datetime,+id; fields: " + ", ".join(stac_search.SORT_FIELDS)),
        param("token", "Paging token from a 'next' link"),
    ]


class StacView(APIView):
    """JSON in and out whatever the client asks, the STAC media type on success, and CORS."""

    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]
    content_negotiation_class = FirstRenderer   # JSON, also to browsers asking text/html
    permission_classes = [AllowAny]
    media_type = stac.JSON

    def urls(self):
        return stac.StacUrls(
            root=self.request.build_absolute_uri(reverse("stac:landing")),
            site=self.request.build_absolute_uri(get_script_prefix()),
        )

    def options(self, request, *args, **kwargs):
        return Response(status=204)

    def handle_exception(self, exc):
        """STAC's error body: the API's, with the `code` and `description` STAC clients read."""
        response = super().handle_exception(exc)
        if isinstance(response.data, dict) and "detail" in response.data:
            response.data.setdefault("code", type(exc).__name__)
            response.data.setdefault("description", str(response.data["detail"]))
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code < 400 and response.status_code != 204:
            response.content_type = self.media_type
        for name, value in CORS_HEADERS.items():
            response[name] = value
        return response

    def visible_collection(self, key):
        try:
            return services.visible_collections(self.request.user).get_by_key(key)
        except Collection.DoesNotExist as exc:
            raise NotFound(str(exc)) from exc

    def page(self, search, self_href, next_link):
        """Run `search`; `next_link(token)` builds the link to the following page."""
        page = stac_query.stac_page(self.request.user, search, stac_search.decode_token(search))
        following = None
        if page.more:
            last = services.sort_values(page.granules[-1], search.order())
            following = next_link(stac_search.encode_token(search, last))
        return Response(stac.item_collection(
            page.granules, self.urls(), self_href=self_href, next_link=following,
            files=page.files,
        ))


def _doc(operation_id, summary, **kwargs):
    return extend_schema(operation_id=operation_id, summary=summary, tags=["stac"],
                         responses={200: OpenApiTypes.OBJECT}, **kwargs)


class LandingPage(StacView):
    @_doc("stac_landing", "STAC API landing page")
    def get(self, request):
        return Response(stac.landing_page(self.urls()))


class Conformance(StacView):
    @_doc("stac_conformance", "STAC and OGC API conformance classes")
    def get(self, request):
        return Response(stac.conformance())


class Collections(StacView):
    @_doc("stac_collections", "STAC collections visible to the caller")
    def get(self, request):
        collections = list(services.visible_collections(request.user))
        extents = services.collection_extents(collections)
        pairs = [(c, extents.get(c.pk, stac.Extent())) for c in collections]
        return Response(stac.collections_page(pairs, self.urls()))


class CollectionDetail(StacView):
    @_doc("stac_collection", "One STAC collection, its extent taken from its granules")
    def get(self, request, key):
        collection = self.visible_collection(key)
        extent = services.collection_extents([collection]).get(collection.pk, stac.Extent())
        return Response(stac.collection(collection, extent, self.urls()))


class CollectionItems(StacView):
    media_type = stac.GEOJSON

    @_doc("stac_items", "Items (archived granules) of a collection", parameters=[
        p for p in _search_parameters() if p.name not in ("collections", "intersects")
    ])
    def get(self, request, key):
        collection = self.visible_collection(key)
        query = request.query_params.dict()
        params = {k: v for k, v in query.items() if k != "intersects"}
        params["collections"] = collection.key
        search = stac_search.search_from_query(params)
        href = self.urls().items(collection.key)
        self_href = request.build_absolute_uri() if query else href
        return self.page(search, self_href, lambda token: stac.next_get_link(href, query, token))


class ItemDetail(StacView):
    media_type = stac.GEOJSON

    @_doc("stac_item", "One item (an archived granule)")
    def get(self, request, key, item_id):
        collection = self.visible_collection(key)
        granule = (
            services.archived_granules(request.user)
            .filter(collection=collection, granule_id=item_id)
            .prefetch_related("files").order_by("-version").first()
        )
        if granule is None:
            raise NotFound(f"no item {item_id} in collection {collection.key}")
        return Response(stac.item(granule, self.urls()))


class Search(StacView):
    media_type = stac.GEOJSON

    @_doc("stac_search_get", "STAC item search (query string)", parameters=_search_parameters())
    def get(self, request):
        query = request.query_params.dict()
        search = stac_search.search_from_query(query)
        href = self.urls().search
        return self.page(search, request.build_absolute_uri(),
                         lambda token: stac.next_get_link(href, query, token))

    @_doc("stac_search_post", "STAC item search (JSON body)", request=OpenApiTypes.OBJECT)
    def post(self, request):
        search = stac_search.search_from_body(request.data)
        href = self.urls().search
        return self.page(search, href, lambda token: stac.next_post_link(href, token))


class Unknown(StacView):
    """Any other path under /stac/: a JSON 404 (with CORS), not the HTML default."""

    schema = None

    def get(self, request, *args, **kwargs):
        raise NotFound(f"no STAC endpoint at {request.path}")

    post = get
