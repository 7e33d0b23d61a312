"""Uploads into the staging area, streamed block by block and checked before they appear."""
import os
import uuid

from django.conf import settings

from backend.catalog import checksums
from backend.errors import Conflict, DomainError, TooLarge

from .. import names
from .staging import staged_path, staging_area


def receive_upload(provider, relative, stream, length, *, checksum_type=None, checksum=None):
    """Stream `length` bytes into the provider's staging area at `relative`, block by block,
    checking size (and checksum when given) before the file appears under its name."""
    problem = names.upload_path_problem(relative)
    if problem:
        raise DomainError(f"The upload path is not accepted: {problem}.")
    length = _declared_length(length)
    kind = _checksum_kind(checksum_type, checksum)
    relative = names.normal_path(relative)
    target = _target(staging_area(provider), relative)
    received, value = _write(target, stream, length, kind, checksum)
    return {"path": relative, "size": received, "checksum_type": kind, "checksum": value}


def _declared_length(length):
    """Content-Length as a number of bytes the archive takes, or why not."""
    if length is None or not str(length).strip().isdigit():
        raise DomainError("Send the size of the file in Content-Length.", status=411)
    length = int(length)
    limit = settings.GRANARY_UPLOAD_MAX_BYTES
    if length > limit:
        raise TooLarge(f"The file is {length} bytes; uploads may be at most {limit} bytes.")
    if length == 0:
        raise DomainError("The file is empty; empty files are not archived.")
    return length


def _checksum_kind(checksum_type, checksum):
    if checksum and not checksum_type:
        raise DomainError("X-Checksum needs X-Checksum-Type (MD5, SHA256, CKSUM or ADLER32).")
    try:
        return checksums.normalise(checksum_type or settings.GRANARY_INGEST_DEFAULT_CHECKSUM)
    except checksums.UnsupportedChecksum as exc:
        raise DomainError(f"X-Checksum-Type: {exc}.") from exc


def _target(area, relative):
    """Where the upload goes in the area, its folders made; a link out or a clash refuses it."""
    area.mkdir(parents=True, exist_ok=True)
    target = staged_path(area, relative)
    if target is None:
        raise DomainError(f"{relative} leads out of the staging area through a link.")
    if target.is_dir():
        raise Conflict(f"{relative} is a folder in your staging area; give a file name.")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise Conflict(f"A folder of {relative} is a file in your staging area.") from exc
    return target


def _write(target, stream, length, kind, checksum):
    """The bytes into a hidden file beside the target, renamed onto it only when size (and
    checksum) match: (bytes received, checksum of them)."""
    tmp = target.with_name(f".{target.name}.upload-{uuid.uuid4().hex[:12]}")
    digest, received = checksums.hasher(kind), 0
    try:
        with open(tmp, "wb") as out:
            while received < length:
                block = stream.read(min(checksums.CHUNK, length - received))
                if not block:
                    break
                received += len(block)
                digest.update(block)
                out.write(block)
        if received != length:
            raise DomainError(f"Received {received} of {length} bytes; the upload was cut "
                              "short. Send it again.")
        value = digest.hexdigest()
        if checksum and not checksums.same(kind, value, checksum):
            raise DomainError(f"The {kind} checksum of what arrived is {value}, not {checksum}; "
                              "nothing was kept. Send it again.")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return received, value
