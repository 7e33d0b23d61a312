"""What the OpenAPI schema says beyond the serializers' own flags (the web app's types come
from it, so a loose schema means loose types)."""
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers
from rest_framework.settings import api_settings


class GranaryAutoSchema(AutoSchema):
    """A model serializer's answer carries every one of its fields, whatever the field's
    `required` says about input (a model default makes it optional there): the response
    component says so, but for the fields its Meta.optional_in_response names (left out on
    request). Plain serializers keep their flags: theirs may leave keys out."""

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "response" and isinstance(serializer, serializers.ModelSerializer):
            optional = set(getattr(serializer.Meta, "optional_in_response", ()))
            schema["required"] = sorted(set(schema.get("properties", {})) - optional)
        return schema

    def map_parsers(self):
        """A view on DRF's default parsers documents JSON only: the API takes JSON (the web
        app sends nothing else); the form parsers are there for the browsable API's HTML forms,
        which read a nested document (a list, an object) differently, so a client generated
        from the schema must not be offered them. Views that name their own parsers (uploads,
        PDR text) document those."""
        if list(self.view.parser_classes) == list(api_settings.DEFAULT_PARSER_CLASSES):
            return ["application/json"]
        return super().map_parsers()


# Every refusal is JSON with a sentence in `detail` (backend.api.exception_handler); `errors`
# holds DRF's field errors or a refused document's list of problems.
ERROR = {
    "type": "object",
    "properties": {"detail": {"type": "string"}, "errors": {}},
    "required": ["detail"],
}
# STAC's refusals add the `code` and `description` STAC clients read (stac_api.StacView).
STAC_ERROR = {
    "type": "object",
    "properties": {"detail": {"type": "string"}, "code": {"type": "string"},
                   "description": {"type": "string"}, "errors": {}},
    "required": ["detail", "code", "description"],
}
_WRITES = {"post", "put", "patch", "delete"}
# What some operations answer beyond the common refusals: bodies of other media types and
# statuses of their own (a download's range, an expired link, a file still being recalled).
_ANY_BYTES = {"*/*": {"schema": {"type": "string", "format": "binary"}}}
_CONTENT = {
    "api_v1_files_download_retrieve": {200: _ANY_BYTES, 206: _ANY_BYTES},
    "api_v1_orders_script_retrieve": {200: {"text/x-python": {"schema": {"type": "string"}}}},
    "api_v1_granary_get_retrieve": {200: {"text/x-python": {"schema": {"type": "string"}}}},
    "stac_items": {200: "application/geo+json"},
    "stac_item": {200: "application/geo+json"},
    "stac_search_get": {200: "application/geo+json"},
    "stac_search_post": {200: "application/geo+json"},
}
_EXTRA_STATUSES = {
    "api_v1_files_download_retrieve": (409, 410, 416, 429, 503),
    "api_v1_ingest_uploads_update": (411, 413),
    "api_v1_auth_login_create": (429,),
    "api_v1_auth_token_create": (429,),
    "api_v1_auth_tokens_create": (429,),
}
_REASONS = {400: "The request is malformed or invalid", 401: "No valid credentials",
            403: "The caller may not do this", 404: "No such thing (or not the caller's)",
            409: "The thing is in the wrong state for it", 410: "No longer available",
            411: "Content-Length is missing", 413: "The body is too large",
            415: "The body's media type is not accepted",
            416: "The range lies outside the file", 429: "Too many requests; retry later",
            503: "Temporarily unavailable; retry later"}


def document_answers(result, generator, request, public):
    """drf-spectacular postprocessing hook: every operation documents the statuses and media
    types it really answers (a client generated from the schema, and the schemathesis run in
    the tests, rely on it): the common refusals with their JSON error body, downloads' bytes of
    any type, the order script and granary-get as Python and STAC's GeoJSON."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"], schemas["StacError"] = ERROR, STAC_ERROR
    for path, item in result.get("paths", {}).items():
        error = {"$ref": "#/components/schemas/" + ("StacError" if path.startswith("/stac/")
                                                    else "Error")}
        for method, operation in item.items():
            if method in {"get", "head"} | _WRITES:
                _document(operation, method, error)
    return result


def _document(operation, method, error):
    responses = operation.setdefault("responses", {})
    op_id = operation.get("operationId")
    for status, content in _CONTENT.get(op_id, {}).items():
        answer = responses.setdefault(str(status), {"description": ""})
        if isinstance(content, str):  # the documented body, under another media type
            content = {content: next(iter(answer.get("content", {}).values()), {})}
        answer["content"] = content
    statuses = [400, 401, 403, 404, *_EXTRA_STATUSES.get(op_id, ())]
    if method in _WRITES:
        statuses.append(409)
    if "requestBody" in operation:
        statuses += [413, 415]
    for status in sorted(set(statuses)):
        answer = responses.setdefault(str(status), {"description": _REASONS[status]})
        body = answer.setdefault("content", {}).setdefault("application/json", {})
        own = body.get("schema")
        # an operation's own refusal body (a refused PDR with its PDRD), or the common error
        body["schema"] = error if own is None or own == error else {"anyOf": [own, error]}


class BearerAuthenticationScheme(OpenApiAuthenticationExtension):
    """How the schema names Granary's token authentication (backend.accounts.authentication)."""

    target_class = "backend.accounts.authentication.BearerAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "`Token <t>` or `Bearer <t>`: a personal API token (gra_...), "
                               "or an access token (JWT) from the configured OpenID provider"}
