"""The archive's promises about bytes: the volume files and the cached files, read back."""
from collections import defaultdict

from django.db.models import F

from backend.catalog import checksums

from .. import tape
from ..media import CopyMissing, MediumError
from ..models import Bucket, CacheEntry, FileCopy, Volume
from ..services.paths import cache_path, medium_of
from . import (
    BUCKET_UNREADABLE,
    CACHE_BYTES,
    COPY_BYTES,
    COPY_PAST_END,
    MEMBER_MISMATCH,
    MEMBER_MISSING,
    MEMBER_ORPHAN,
    OBJECT_MISSING,
    OBJECT_ORPHAN,
    OBJECT_SIZE,
    PAST_END_OF_DATA,
    VOLUME_MISSING,
    VOLUME_TRUNCATED,
    Tally,
    Violation,
)

WRITABLE = (Volume.State.SCRATCH, Volume.State.FILLING)
KNOWN_UNREADABLE = (Volume.State.SUSPECT, Volume.State.RETIRED)
COPY_FIELDS = ("pk", "file_id", "copy_number", "segment", "position", "data_offset", "length",
               "checksum_type", "checksum", "state", "file__name", "file__granule__granule_id",
               "file__granule__version", "file__granule__collection__short_name",
               "file__granule__collection__version")


def check_bytes(sample=None, tally=None):
    """Every volume's length; every verified copy's bytes and every volume's members, or the
    bytes of a random sample of copies; every cached file, or a random sample of them."""
    tally = tally if tally is not None else Tally()
    verified = FileCopy.objects.filter(state=FileCopy.State.VERIFIED)
    chosen = objects = None
    if sample:
        chosen = _by_volume(verified.filter(volume__isnull=False).order_by("?")[:sample])
        objects = set(verified.filter(bucket__isnull=False).order_by("?")[:sample].values_list(
            "pk", flat=True))
    found = []
    for volume in Volume.objects.exclude(state__in=KNOWN_UNREADABLE).select_related("silo"):
        copies = chosen.get(volume.pk, []) if chosen is not None else None
        found += check_volume(volume, copies=copies, members=sample is None, tally=tally)
    for bucket in Bucket.objects.all():
        found += check_bucket(bucket, objects, tally)
    entries = CacheEntry.objects.exclude(state=CacheEntry.State.STAGING)
    if sample:
        entries = entries.order_by("?")[:sample]
    found += check_cache(entries, tally=tally)
    return found


def _by_volume(copies):
    """{volume id: copy rows in tape order}."""
    out = defaultdict(list)
    for row in copies.values("volume_id", *COPY_FIELDS):
        out[row["volume_id"]].append(row)
    for rows in out.values():
        rows.sort(key=lambda row: row["data_offset"])
    return out


def check_volume(volume, copies=None, members=True, tally=None):
    """One volume: its file is there; a short one is not writable and keeps no verified copy
    past its end; the copies' bytes (all VERIFIED ones when `copies` is None) hash to their
    checksums; with members, its tar headers match the catalog."""
    tally = tally if tally is not None else Tally()
    medium = medium_of(volume)
    try:
        size = medium.size()
    except FileNotFoundError:
        return [Violation(VOLUME_MISSING, f"the file of volume {volume.label} is missing",
                          volume_id=volume.pk)]
    except (tape.VolumeError, MediumError) as exc:
        return [Violation(VOLUME_MISSING, str(exc), volume_id=volume.pk)]
    tally.volumes += 1
    found = []
    if size < volume.end_of_data and volume.state in WRITABLE:
        found.append(Violation(
            VOLUME_TRUNCATED, f"{volume.label} ends at byte {size}, before its end of data "
            f"{volume.end_of_data}, and is still {volume.state}", volume_id=volume.pk,
            extra={"size": size}))
    verified = FileCopy.objects.filter(volume=volume, state=FileCopy.State.VERIFIED)
    lost = list(verified.annotate(end=F("data_offset") + F("length")).filter(end__gt=size)
                .values(*COPY_FIELDS))
    found += [Violation(COPY_PAST_END, f"{_name(c)} copy {c['copy_number']} lies past the end "
                        f"of {volume.label} (byte {size})", file_id=c["file_id"], copy_id=c["pk"],
                        volume_id=volume.pk) for c in lost]
    if copies is None:
        copies = list(verified.order_by("data_offset").values(*COPY_FIELDS))
    lost_ids = {c["pk"] for c in lost}
    found += _copy_bytes(volume, medium, [c for c in copies if c["pk"] not in lost_ids], tally)
    past = None
    if members:
        listed, past = _members(volume, medium, lost_ids, size)
        found += listed
    note = past_end_of_data(volume, size, past)
    if note:
        tally.notes.append(note)
    return found


# a note lists this many of the members past a volume's end of data at most (it counts all)
PAST_END_LISTED = 20


def past_end_of_data(volume, size, members):
    """A note of the bytes past a volume's recorded end of data beyond its end-of-archive marker
    (None when there are none): a write that was not recorded left them (interrupted, by a
    database restart say, or under way now). Nothing is lost; the next append cuts them off.
    `members`: the whole members the volume's tar headers list there (None: not scanned)."""
    tail = size - volume.end_of_data
    if tail <= len(tape.END_OF_ARCHIVE) and not members:
        return None
    note = {"kind": PAST_END_OF_DATA, "volume": volume.label, "volume_id": volume.pk,
            "end_of_data": volume.end_of_data, "tail_bytes": tail}
    if members is None:
        what = "(a full reconciliation lists what they are)"
    else:
        data = sum(m.size for m in members)
        note.update(members=len(members), member_bytes=data,
                    listed=[_past_member(m) for m in members[:PAST_END_LISTED]])
        what = f"hold {len(members)} whole members ({_mb(data)} of data)"
    note["message"] = (f"{_mb(tail)} lie on {volume.label} past its recorded end of data (byte "
                       f"{volume.end_of_data}) {what}: a write not recorded (interrupted, or "
                       "under way) left them; nothing is lost, the next append cuts them off")
    return note


def _past_member(m):
    h = m.headers
    return {"name": m.name, "position": m.position, "size": m.size,
            "collection": h.get("collection", ""), "granule_id": h.get("granule_id", ""),
            "file": h.get("file", ""), "copy": h.get("copy", "")}


def _mb(n):
    return f"{n / 1e6:.1f} MB"


def _name(c):
    return f"{_collection(c)}/{c['file__granule__granule_id']}/{c['file__name']}"


def _collection(c):
    return (f"{c['file__granule__collection__short_name']}."
            f"{c['file__granule__collection__version']}")


def _copy_bytes(volume, medium, copies, tally):
    if not copies:
        return []
    digests = medium.read_many([(c["data_offset"], c["length"], c["checksum_type"])
                                    for c in copies])
    tally.copies += len(copies)
    return [Violation(COPY_BYTES, f"{_name(c)} copy {c['copy_number']} on {volume.label} at "
                      f"byte {c['data_offset']} does not hash to its checksum",
                      file_id=c["file_id"], copy_id=c["pk"], volume_id=volume.pk)
            for c, digest in zip(copies, digests, strict=True)
            if not checksums.same(c["checksum_type"], digest, c["checksum"])]


def tar_end(members):
    """Where the members tar can list end (a hole of zeros or a torn header stops it)."""
    return max((m.data_offset + m.size + (-m.size) % tape.TAR_BLOCK for m in members), default=0)


def _members(volume, medium, lost_ids, size):
    """The volume's members as its tar headers list them, against the copies catalog:
    (violations, the members past its end of data; None when it cannot be listed)."""
    try:
        listing = medium.scan()
    except (tape.VolumeError, MediumError) as exc:
        return [Violation(VOLUME_MISSING, str(exc), volume_id=volume.pk)], None
    members = [m for m in listing if not m.is_label]
    found, listed = [], set()
    end = tar_end(listing)
    if volume.state in WRITABLE and end < volume.end_of_data <= size:
        found.append(Violation(
            VOLUME_TRUNCATED, f"the tar headers of {volume.label} end at byte {end}, before its "
            f"end of data {volume.end_of_data}: nothing appended to it could be listed",
            volume_id=volume.pk, extra={"tar_end": end}))
    rows = defaultdict(list)
    for c in FileCopy.objects.filter(volume=volume).values(*COPY_FIELDS):
        rows[c["position"]].append(c)
    for m in members:
        same = [c for c in rows.get(m.position, ())
                if c["data_offset"] == m.data_offset and c["length"] == m.size]
        if not same:
            if m.position < volume.end_of_data:  # past it: a torn write the next one overwrites
                found.append(Violation(
                    MEMBER_ORPHAN, f"{m.name} at byte {m.position} of {volume.label} is in no "
                    "copy of the catalog", volume_id=volume.pk,
                    extra={"position": m.position, "member": m.name}))
            continue
        listed.add(m.position)
        live = [c for c in same if c["state"] != FileCopy.State.RELEASED]
        for c in live:
            if not _headers_match(m.headers, c):
                found.append(Violation(
                    MEMBER_MISMATCH, f"the member at byte {m.position} of {volume.label} names "
                    f"{m.name}, not {_name(c)} copy {c['copy_number']}", file_id=c["file_id"],
                    copy_id=c["pk"], volume_id=volume.pk))
    for position, copies in rows.items():
        for c in copies:
            if (c["state"] == FileCopy.State.VERIFIED and position not in listed
                    and c["pk"] not in lost_ids):
                found.append(Violation(
                    MEMBER_MISSING, f"{_name(c)} copy {c['copy_number']} at byte {position} of "
                    f"{volume.label} is not listed by the volume's tar headers",
                    file_id=c["file_id"], copy_id=c["pk"], volume_id=volume.pk))
    return found, [m for m in members if m.position >= volume.end_of_data]


def _headers_match(headers, c):
    expected = {
        "collection": _collection(c),
        "granule_id": c["file__granule__granule_id"],
        "granule_version": str(c["file__granule__version"]), "file": c["file__name"],
        "copy": str(c["copy_number"]), "segment": str(c["segment"]),
    }
    return all(str(headers.get(key)) == value for key, value in expected.items())


def check_cache(entries, tally=None):
    """Each cached file hashes to its catalog checksum (a missing file is records' concern)."""
    tally = tally if tally is not None else Tally()
    found = []
    for entry in entries.select_related("file__granule__collection"):
        f = entry.file
        try:
            digest, size = checksums.of_file(f.checksum_type, cache_path(f))
        except FileNotFoundError:
            continue
        tally.cache_files += 1
        if size != f.size or not checksums.same(f.checksum_type, digest, f.checksum):
            found.append(Violation(CACHE_BYTES, f"the cached copy of {f.name} ({entry.state}) "
                                   "does not hash to its catalog checksum", file_id=f.pk))
    return found


def check_bucket(bucket, read=None, tally=None):
    """One bucket, listed, against the catalog's copies in it: each verified copy's object is
    there with its length, and its bytes (those of the copies in `read`, or all when None) hash
    to its checksum; an object that no live copy and no migration under way names is an
    orphan (a write whose mover died, a delete that did not reach the store)."""
    from ..services.buckets import pending_keys, store_for

    tally = tally if tally is not None else Tally()
    store = store_for(bucket)
    try:
        listed = {o.key: o for o in store.listing(bucket.prefix)}
        pending = pending_keys(bucket)
    except MediumError as exc:
        return [Violation(BUCKET_UNREADABLE, f"bucket {bucket.name} cannot be listed: {exc}",
                          extra={"bucket": bucket.name})]
    fields = (*COPY_FIELDS, "key", "version_id")
    copies = list(FileCopy.objects.filter(bucket=bucket).exclude(
        state=FileCopy.State.RELEASED).order_by("pk").values(*fields))
    found, named = [], {c["key"] for c in copies}
    for c in copies:
        if c["state"] != FileCopy.State.VERIFIED:
            continue
        at = {"bucket_id": bucket.pk, "key": c["key"]}
        obj = listed.get(c["key"])
        if obj is None:
            found.append(Violation(OBJECT_MISSING, f"{_name(c)} copy {c['copy_number']}: object "
                                   f"{c['key']} is missing from bucket {bucket.name}",
                                   file_id=c["file_id"], copy_id=c["pk"], extra=at))
        elif _wrong_size(obj, c):
            found.append(Violation(OBJECT_SIZE, f"{_name(c)} copy {c['copy_number']}: object "
                                   f"{c['key']} in {bucket.name} has {obj.length} bytes, not "
                                   f"{_expected_size(c)}", file_id=c["file_id"],
                                   copy_id=c["pk"], extra=at))
        elif read is None or c["pk"] in read:
            found += _object_bytes(store, bucket, c, tally)
    found += [Violation(OBJECT_ORPHAN, f"object {key} in bucket {bucket.name} ({o.length} bytes) "
                        "is in no copy of the catalog", extra={"bucket_id": bucket.pk, "key": key})
              for key, o in sorted(listed.items()) if key not in named and key not in pending]
    return found


def _wrong_size(obj, c):
    """A whole object has the copy's length; a pack at least reaches past its member's data."""
    if c["data_offset"]:
        return obj.length < c["data_offset"] + c["length"]
    return obj.length != c["length"]


def _expected_size(c):
    return f"at least {c['data_offset'] + c['length']}" if c["data_offset"] else c["length"]


def _object_bytes(store, bucket, c, tally):
    try:
        good = store.verify(c["key"], c["length"], c["checksum_type"], c["checksum"],
                            c["version_id"], c["data_offset"])
    except CopyMissing:
        good = False
    except MediumError as exc:
        return [Violation(BUCKET_UNREADABLE, f"bucket {bucket.name}: {exc}",
                          extra={"bucket": bucket.name})]
    tally.copies += 1
    if good:
        return []
    return [Violation(COPY_BYTES, f"{_name(c)} copy {c['copy_number']}: object {c['key']} in "
                      f"{bucket.name} does not hash to its checksum", file_id=c["file_id"],
                      copy_id=c["pk"], extra={"bucket_id": bucket.pk, "key": c["key"]})]

