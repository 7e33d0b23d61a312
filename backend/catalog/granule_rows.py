"""A search's page of granules, a granule's page and a timeline as JSON, in plain Python: the
values GranuleSerializer's, GranuleDetailSerializer's and TimelineSerializer's fields give,
without DRF calling a field object for each of the ~20 values of a granule, its files and their
copies (a fifth of the search page's CPU: issue #33) or for each of a timeline's buckets. The
serializers still declare the fields, for the schema; tests/catalog/test_granule_rows.py (the
rows) and tests/distribution/test_portal_api.py (a granule's page) hold the renderings equal."""
import json

from django.db.models.manager import BaseManager
from django.urls import reverse
from django.utils import timezone
from rest_framework import serializers

from . import shapes
from .models import File
from .storage import storage


def footprint_of(granule):
    """The stored outline as GeoJSON, else its box (older rows), else None."""
    if granule.footprint:
        return json.loads(granule.footprint)
    if granule.bbox is None:
        return None
    return shapes.from_box(*granule.bbox).geojson()


def browse_url(granule):
    """The first browse file by name (from the prefetched files: no query per row)."""
    browse = next((f for f in sorted(granule.files.all(), key=lambda f: f.name)
                   if f.role == File.Role.BROWSE), None)
    return reverse("file-download", args=[browse.pk]) if browse else None


def moment(value, zone):
    """As DRF's DateTimeField writes it: ISO 8601 in the current time zone, UTC as Z."""
    if value is None:
        return None
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _file(file):
    return {"id": file.pk, "name": file.name, "role": file.role, "size": file.size,
            "checksum_type": file.checksum_type, "checksum": file.checksum}


def granule_row(granule, zone, residency=None):
    """GranuleSerializer's representation of `granule` (collection and files loaded; its
    residency annotated, or given)."""
    box = granule.bbox
    return {
        "id": granule.pk,
        "collection": granule.collection.key,
        "granule_id": granule.granule_id,
        "version": granule.version,
        "state": granule.state,
        "temporal_start": moment(granule.temporal_start, zone),
        "temporal_end": moment(granule.temporal_end, zone),
        "bbox": None if box is None else [float(v) for v in box],
        "footprint": footprint_of(granule),
        "attributes": {str(k): v for k, v in granule.attributes.items()},
        "total_size": granule.total_size,
        "residency": residency or granule.residency,
        "files": [_file(f) for f in granule.files.all()],
        "replaces": granule.replaces_id,
        "created_at": moment(granule.created_at, zone),
        "archived_at": moment(granule.archived_at, zone),
        "browse_url": browse_url(granule),
    }


def _copy(copy):
    on_tape = copy.volume_id is not None
    in_bucket = copy.bucket_id is not None
    return {"copy_number": copy.copy_number, "segment": copy.segment, "medium": copy.medium,
            "state": copy.state, "length": copy.length,
            "volume": copy.volume.label if on_tape else None,
            "silo": copy.volume.silo.name if on_tape else None,
            "bucket": copy.bucket.name if in_bucket else None,
            "key": copy.key if in_bucket else None,
            "offset": copy.data_offset if in_bucket else None}


def _stored_file(file, where):
    return {**_file(file), "in_cache": where.file_in_cache(file),
            "copies": [_copy(c) for c in where.copies(file)],
            "download_url": (reverse("file-download", args=[file.pk])
                             if where.file_direct(file) else None)}


def granule_detail_row(granule, zone):
    """GranuleDetailSerializer's representation: the row with each file's storage (files,
    cache entries and copies prefetched). Its residency is the rule services.in_cache_q writes
    in SQL for a search, taken from those files: "cache" when none is missing from the cache."""
    where, files = storage(), granule.files.all()
    residency = "cache" if all(where.file_in_cache(f) for f in files) else "tape"
    return {**granule_row(granule, zone, residency),
            "files": [_stored_file(f, where) for f in files]}


class GranuleRows(serializers.ListSerializer):
    """GranuleSerializer(many=True): each row by granule_row."""

    def to_representation(self, data):
        rows = data.all() if isinstance(data, BaseManager) else data
        zone = timezone.get_current_timezone()
        return [granule_row(granule, zone) for granule in rows]


def timeline_row(timeline):
    """TimelineSerializer's representation of `timeline` (a services.Timeline): its buckets'
    starts written without a DateTimeField call each (up to MAX_BUCKETS a search page)."""
    zone = timezone.get_current_timezone()
    return {"bucket": timeline.bucket, "total": int(timeline.total),
            "buckets": [{"start": moment(b["start"], zone), "count": int(b["count"])}
                        for b in timeline.buckets]}
