"""The API's JSON parser: DRF's, with the depth of a document bounded.

A JSON body nested 100,000 levels deep made the decoder overflow Python's stack (an HTML 500);
one nested a few hundred levels deep parsed, then overflowed the code that walked it. No
Granary document is nested more than a handful of levels (a STAC `intersects` geometry is the
deepest: four), so anything deeper than MAX_DEPTH is refused as malformed (400). The body's
size is bounded by DATA_UPLOAD_MAX_MEMORY_SIZE (a 413, see backend.api).
"""
import io

from django.conf import settings
from rest_framework import parsers, status
from rest_framework.exceptions import APIException, ParseError

MAX_DEPTH = 32


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


def read_body(stream):
    """The body's bytes, at most DATA_UPLOAD_MAX_MEMORY_SIZE of them (BodyTooLarge beyond)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    raw = stream.read() if limit is None else stream.read(limit + 1)
    if limit is not None and len(raw) > limit:
        raise BodyTooLarge(f"The request body is larger than {limit} bytes; split it into "
                           "smaller requests.")
    return raw


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        raw = read_body(stream)
        try:
            data = super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels") from exc
        if depth(data, MAX_DEPTH) > MAX_DEPTH:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels")
        return data


def depth(value, limit):
    """How deeply lists and objects nest in `value` (a scalar is 0), counted without recursion
    and no further than limit + 1."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if not isinstance(item, list):
            continue
        level += 1
        deepest = max(deepest, level)
        if level <= limit:
            stack.extend((child, level) for child in item)
    return deepest
