"""An S3-compatible object store as a medium (boto3): a bucket holds one copy per object.

A write streams the file once: the catalog's checksum is computed over exactly the bytes sent
(so the object holds the catalog's bytes, or the write is refused), every request carries the
MD5 of its body for the server to check (so the server stored what it was sent), and the ETag
it answers is compared with the one those bytes must give (MD5, or MD5 of the parts' MD5s and
their count for a multipart object). A server whose ETags are of another kind has the object
read back and hashed instead. Every read is hashed by the caller against the catalog.
"""
import base64
import functools
import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor

from backend.catalog import checksums

from . import CopyMissing, Health, Listed, MediumError, Stored

CHUNK = 1 << 20
MAX_PARTS = 10_000
_clients, _clients_lock = {}, threading.Lock()

# error codes that mean the whole store refuses us, not one object
_REFUSED = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "403",
            "InvalidToken", "ExpiredToken"}
_MISSING = {"NoSuchKey", "404", "NotFound"}


def preload():
    """Import boto3 and load S3's service model once, in a worker's main process before its
    pool forks: each pool process then makes its clients from what it inherited (~0.01 s)
    instead of importing and loading them on its first object (0.5 s of CPU or more, a
    second of wall time under load, while its first batch waited)."""
    with _clients_lock:
        return _session()


@functools.cache
def _session():
    """The one boto3 session of the process (a botocore session wrapped by a second boto3
    session gets boto3's handlers twice, and its next client fails); called under
    _clients_lock, so it is made once."""
    import boto3

    session = boto3.session.Session()
    # a client made once loads every file a client needs into the session's loader
    session.client("s3", region_name="us-east-1", endpoint_url="http://127.0.0.1:9",
                   aws_access_key_id="-", aws_secret_access_key="-")
    return session


def _client(config, timeout_s):
    from botocore.config import Config

    key = (config["endpoint_url"], config["access_key"], config["secret_key"],
           config.get("region", "us-east-1"), timeout_s)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = _session().client(
                "s3", endpoint_url=config["endpoint_url"], region_name=key[3],
                aws_access_key_id=config["access_key"], aws_secret_access_key=config["secret_key"],
                config=Config(connect_timeout=timeout_s, read_timeout=timeout_s * 3,
                              retries={"max_attempts": 2, "mode": "standard"},
                              s3={"addressing_style": "path"}, max_pool_connections=32,
                              request_checksum_calculation="when_required",
                              response_checksum_validation="when_required"))
        return _clients[key]


def _b64(digest):
    return base64.b64encode(digest).decode()


class ObjectStore:
    """One bucket of one store. `config`: endpoint_url, access_key, secret_key, region."""

    medium = "object"

    def __init__(self, store, bucket, config, *, part_bytes=64 << 20, timeout_s=10.0,
                 workers=2):
        self.store, self.bucket, self.config = store, bucket, config or {}
        self.part_bytes, self.timeout_s, self.workers = part_bytes, timeout_s, workers

    @property
    def where(self):
        return f"object store {self.store} ({self.config.get('endpoint_url') or 'no endpoint'})"

    def _s3(self):
        if not self.config.get("endpoint_url"):
            raise MediumError(f"{self.where} is not configured: set GRANARY_S3_ENDPOINT and "
                              "its keys", whole=True)
        return _client(self.config, self.timeout_s)

    def error(self, exc, key=""):
        """The MediumError an operator reads for a boto3 failure."""
        from botocore import exceptions as bx

        if isinstance(exc, MediumError):
            return exc
        if isinstance(exc, bx.ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            if code == "NoSuchBucket":
                return MediumError(f"bucket {self.bucket} does not exist on {self.where}",
                                   whole=True)
            if code in _REFUSED:
                return MediumError(f"{self.where} refused Granary's credentials ({code})",
                                   whole=True)
            if code == "InvalidRange" and key:
                return CopyMissing(f"object {key} in bucket {self.bucket} is shorter than the "
                                   "catalog says")
            if code in _MISSING and key:
                return CopyMissing(f"object {key} is missing from bucket {self.bucket}")
            if code in _MISSING:
                return MediumError(f"bucket {self.bucket} does not exist on {self.where}",
                                   whole=True)
            if status >= 500:
                return MediumError(f"{self.where} failed ({status} {code})", whole=True)
            return MediumError(f"{self.where}: {code or status} on {key or self.bucket}")
        if isinstance(exc, (bx.EndpointConnectionError, bx.ConnectTimeoutError,
                            bx.ReadTimeoutError, bx.ConnectionClosedError, ConnectionError)):
            return MediumError(f"{self.where} is unreachable: {exc}", whole=True)
        if isinstance(exc, bx.BotoCoreError):
            return MediumError(f"{self.where}: {exc}", whole=True)
        return MediumError(f"{self.where}: {exc}")

    def _call(self, method, key="", **kwargs):
        try:
            return getattr(self._s3(), method)(Bucket=self.bucket, **kwargs)
        except Exception as exc:   # noqa: BLE001 - every failure becomes a reason
            raise self.error(exc, key) from exc

    # -- writing -------------------------------------------------------------------------------

    def write(self, key, path, size, checksum_type, checksum, metadata=None):
        """Store the file at `path` as `key`, proving on the way that the bytes sent are the
        catalog's (MediumError, not whole, when they are not) and that the server kept them."""
        metadata = {k: str(v) for k, v in (metadata or {}).items()}
        digest = checksums.hasher(checksum_type)
        with open(path, "rb") as source:
            if size <= self.part_bytes:
                body = source.read()
                digest.update(body)
                self._check_sent(digest, checksum_type, checksum, key, len(body), size)
                return self.put(key, body, metadata)
            answer, expected, sent = self._multipart(key, source, size, digest, metadata)
            self._check_sent(digest, checksum_type, checksum, key, sent, size, delete=True)
        etag = answer.get("ETag", "").strip('"')
        if etag not in expected:
            self._read_back(key, size, checksum_type, checksum)
        return Stored(key, size, etag, answer.get("VersionId") or "")

    def put(self, key, body, metadata=None):
        """Store `body` (bytes already proven to be the catalog's) as one object, its MD5 sent
        for the server to check and its ETag compared with that MD5 (read back when the
        server answers ETags of another kind)."""
        md5 = hashlib.md5(body, usedforsecurity=False)
        answer = self._call("put_object", key, Key=key, Body=body, ContentMD5=_b64(md5.digest()),
                            Metadata={k: str(v) for k, v in (metadata or {}).items()})
        etag = answer.get("ETag", "").strip('"')
        if etag != md5.hexdigest():
            self._read_back(key, len(body), "MD5", md5.hexdigest())
        return Stored(key, len(body), etag, answer.get("VersionId") or "")

    def _check_sent(self, digest, checksum_type, checksum, key, sent, size, delete=False):
        if sent == size and checksums.same(checksum_type, digest.hexdigest(), checksum):
            return
        if delete:
            self.delete(key)
        raise MediumError(f"the bytes sent for {key} do not match the catalog checksum "
                          "(the cached file changed?)")

    def _multipart(self, key, source, size, digest, metadata):
        """Send the file in parts; (answer, the ETags the object may have, bytes sent). S3 and
        rclone answer MD5(part MD5s)-N; a server answering another kind has the object read
        back. The catalog's MD5, when that is its checksum, is the whole object's MD5 too."""
        part = max(self.part_bytes, -(-size // MAX_PARTS))
        upload = self._call("create_multipart_upload", key, Key=key, Metadata=metadata)
        upload_id, parts, md5s, sent = upload["UploadId"], [], [], 0
        # read in order (the checksum is of the whole), send a few parts at once
        room = threading.BoundedSemaphore(self.workers + 1)
        try:
            with ThreadPoolExecutor(self.workers, thread_name_prefix="s3-part") as pool:
                number = 0
                while True:
                    room.acquire()
                    body = source.read(part)
                    if not body:
                        room.release()
                        break
                    number += 1
                    sent += len(body)
                    digest.update(body)
                    md5 = hashlib.md5(body, usedforsecurity=False).digest()
                    md5s.append(md5)
                    parts.append(pool.submit(self._part, key, upload_id, number, body, md5, room))
                done = [{"PartNumber": i, "ETag": f.result()}
                        for i, f in enumerate(parts, start=1)]
            answer = self._call("complete_multipart_upload", key, Key=key, UploadId=upload_id,
                                MultipartUpload={"Parts": done})
        except BaseException:
            try:
                self._call("abort_multipart_upload", key, Key=key, UploadId=upload_id)
            except MediumError:
                pass   # the server is gone: its reconciliation lists the leftover parts
            raise
        parts_etag = hashlib.md5(b"".join(md5s), usedforsecurity=False).hexdigest()
        whole = digest.hexdigest() if getattr(digest, "name", "") == "md5" else None
        return answer, {f"{parts_etag}-{len(md5s)}", whole} - {None}, sent

    def _part(self, key, upload_id, number, body, md5, room):
        try:
            return self._call("upload_part", key, Key=key, UploadId=upload_id,
                              PartNumber=number, Body=body, ContentMD5=_b64(md5))["ETag"]
        finally:
            room.release()

    def _read_back(self, key, size, checksum_type, checksum):
        digest, length = self.read(key, checksum_type)
        if length != size or not checksums.same(checksum_type, digest, checksum):
            self.delete(key)
            raise MediumError(f"object {key} read back from bucket {self.bucket} does not "
                              "match the catalog checksum")

    # -- reading -------------------------------------------------------------------------------

    def open_body(self, key, offset=0, length=None, version_id=""):
        """The object's body (or `length` bytes from `offset`), a stream to read and close;
        read failures are boto3's, for the caller to pass through `error`."""
        kwargs = {"Key": key}
        if version_id:
            kwargs["VersionId"] = version_id
        if offset or length is not None:
            end = "" if length is None else str(offset + length - 1)
            kwargs["Range"] = f"bytes={offset}-{end}"
        return self._call("get_object", key, **kwargs)["Body"]

    def read(self, key, checksum_type, sink=None, offset=0, length=None, version_id=""):
        """Stream the object (or `length` bytes from `offset`) to sink; (digest, bytes read)."""
        body = self.open_body(key, offset, length, version_id)
        digest, count = checksums.hasher(checksum_type), 0
        try:
            for chunk in body.iter_chunks(CHUNK):
                digest.update(chunk)
                count += len(chunk)
                if sink is not None:
                    sink(chunk)
        except Exception as exc:   # noqa: BLE001 - a connection dropped mid-body
            raise self.error(exc, key) from exc
        finally:
            body.close()
        return digest.hexdigest(), count

    def verify(self, key, length, checksum_type, checksum, version_id="", offset=0):
        """Whether the object (or, from `offset`, the member of a pack) holds the catalog's
        bytes (a CopyMissing when it is gone)."""
        digest, count = self.read(key, checksum_type, version_id=version_id, offset=offset,
                                  length=length if offset else None)
        return count == length and checksums.same(checksum_type, digest, checksum)

    # -- the rest ------------------------------------------------------------------------------

    def delete(self, key, version_id=""):
        kwargs = {"Key": key}
        if version_id:
            kwargs["VersionId"] = version_id
        self._call("delete_object", key, **kwargs)

    def listing(self, prefix=""):
        """Every object under `prefix`, as Listed, in key order."""
        token = None
        while True:
            kwargs = {"Prefix": prefix, "MaxKeys": 1000}
            if token:
                kwargs["ContinuationToken"] = token
            page = self._call("list_objects_v2", **kwargs)
            for item in page.get("Contents", []):
                yield Listed(item["Key"], item["Size"], item.get("ETag", "").strip('"'))
            if not page.get("IsTruncated"):
                return
            token = page["NextContinuationToken"]

    def stat(self, key):
        """(length, etag) of the object, CopyMissing when it is not there."""
        answer = self._call("head_object", key, Key=key)
        return answer["ContentLength"], answer.get("ETag", "").strip('"')

    def health(self):
        try:
            self._call("head_bucket")
        except MediumError as exc:
            return Health(False, exc.reason)
        return Health(True)

    def create_bucket(self):
        """Make the bucket when it is not there yet (setup, demo, tests)."""
        try:
            self._call("head_bucket")
        except MediumError:
            self._call("create_bucket")
