"""What Granary's object-store tier relies on, checked against the real S3 server the tests and
`make run` use (`rclone serve s3`, tests/s3_server.py), each against an independent expectation
(the bytes written, hashlib). Where rclone differs from AWS S3 the test says so: code that must
also work on AWS may rely on neither behaviour."""
import base64
import hashlib
import io
import os
import uuid

import pytest
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    FlexibleChecksumError,
    ResponseStreamingError,
)

MiB = 1024 * 1024


def _md5(data):
    return hashlib.md5(data).hexdigest()


def _b64(digest):
    return base64.b64encode(digest).decode()


def _error(excinfo):
    response = excinfo.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]


def test_put_then_get_gives_the_same_bytes_and_an_md5_etag(s3_bucket):
    server, bucket = s3_bucket
    s3, data = server.client(), os.urandom(100_000)
    put = s3.put_object(Bucket=bucket, Key="a/b/granule.nc", Body=data)
    got = s3.get_object(Bucket=bucket, Key="a/b/granule.nc")
    assert got["Body"].read() == data
    assert put["ETag"] == got["ETag"] == f'"{_md5(data)}"'
    assert (server.root / bucket / "a" / "b" / "granule.nc").read_bytes() == data


def test_ranged_get_returns_exactly_those_bytes(s3_bucket):
    server, bucket = s3_bucket
    s3, data = server.client(), os.urandom(64)
    s3.put_object(Bucket=bucket, Key="k", Body=data)
    got = s3.get_object(Bucket=bucket, Key="k", Range="bytes=5-9")
    assert got["Body"].read() == data[5:10]
    assert got["ContentRange"] == "bytes 5-9/64"
    assert got["ContentLength"] == 5


def test_ranged_get_needs_response_checksum_validation_off(s3_bucket):
    """A client with botocore's default checksums stores a CRC32 of the whole object with it;
    rclone returns that CRC32 with a ranged GET too (AWS does not), and the default validation
    then fails. Hence client_config()'s response_checksum_validation="when_required"."""
    server, bucket = s3_bucket
    defaults = server.client(request_checksum_calculation="when_supported",
                             response_checksum_validation="when_supported")
    data = os.urandom(64)
    defaults.put_object(Bucket=bucket, Key="k", Body=data)
    with pytest.raises(FlexibleChecksumError):
        defaults.get_object(Bucket=bucket, Key="k", Range="bytes=5-9")["Body"].read()
    assert defaults.get_object(Bucket=bucket, Key="k")["Body"].read() == data
    got = server.client().get_object(Bucket=bucket, Key="k", Range="bytes=5-9")
    assert got["Body"].read() == data[5:10]


def test_multipart_upload_gives_back_identical_bytes(s3_bucket):
    """ETag of a multipart object: rclone gives the MD5 of the whole content; AWS gives
    md5(part md5s)-N. Granary must keep its own digest rather than read one into the ETag."""
    server, bucket = s3_bucket
    s3, data = server.client(), os.urandom(12 * MiB)
    parts = []
    s3.meta.events.register("before-call.s3.UploadPart",
                            lambda params, **_: parts.append(params["url_path"]))
    config = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    s3.upload_fileobj(io.BytesIO(data), bucket, "big.bin", Config=config)
    assert len(parts) == 3

    back = io.BytesIO()
    s3.download_fileobj(bucket, "big.bin", back, Config=config)
    assert hashlib.sha256(back.getvalue()).hexdigest() == hashlib.sha256(data).hexdigest()
    head = s3.head_object(Bucket=bucket, Key="big.bin")
    assert head["ContentLength"] == 12 * MiB
    assert head["ETag"] == f'"{_md5(data)}"'


def test_head_object_gives_the_length(s3_bucket):
    server, bucket = s3_bucket
    s3 = server.client()
    s3.put_object(Bucket=bucket, Key="k", Body=b"x" * 12345)
    assert s3.head_object(Bucket=bucket, Key="k")["ContentLength"] == 12345


def test_list_with_a_prefix_pages_through_every_key_once(s3_bucket):
    server, bucket = s3_bucket
    s3 = server.client()
    wanted = [f"granules/2024/{n}.nc" for n in range(5)]
    for key in [*wanted, "granules/2025/0.nc", "other/0.nc"]:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())

    pages, token = [], {}
    while True:
        page = s3.list_objects_v2(Bucket=bucket, Prefix="granules/2024/", MaxKeys=2, **token)
        pages.append([o["Key"] for o in page.get("Contents", [])])
        if not page["IsTruncated"]:
            break
        token = {"ContinuationToken": page["NextContinuationToken"]}
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [k for p in pages for k in p] == sorted(wanted)


def test_deleted_object_is_gone(s3_bucket):
    server, bucket = s3_bucket
    s3 = server.client()
    s3.put_object(Bucket=bucket, Key="d/k", Body=b"1")
    s3.delete_object(Bucket=bucket, Key="d/k")
    with pytest.raises(ClientError) as excinfo:
        s3.get_object(Bucket=bucket, Key="d/k")
    assert _error(excinfo) == ("NoSuchKey", 404)
    assert s3.list_objects_v2(Bucket=bucket).get("Contents", []) == []
    assert not (server.root / bucket / "d" / "k").exists()


def test_wrong_credentials_are_refused(s3_bucket):
    server, bucket = s3_bucket
    server.client().put_object(Bucket=bucket, Key="k", Body=b"secret")
    with pytest.raises(ClientError) as excinfo:
        server.client(secret_key="not-the-secret").get_object(Bucket=bucket, Key="k")
    assert _error(excinfo) == ("SignatureDoesNotMatch", 403)
    with pytest.raises(ClientError) as excinfo:
        server.client(access_key="someone-else").get_object(Bucket=bucket, Key="k")
    assert _error(excinfo) == ("InvalidAccessKeyId", 403)


def test_missing_bucket_is_no_such_bucket(s3_server):
    s3, bucket = s3_server.client(), f"missing-{uuid.uuid4().hex[:12]}"
    for call in (lambda: s3.get_object(Bucket=bucket, Key="k"),
                 lambda: s3.put_object(Bucket=bucket, Key="k", Body=b"1")):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert _error(excinfo) == ("NoSuchBucket", 404)


def test_bytes_changed_behind_the_server_are_served_changed(s3_bucket):
    """The server keeps no digest of its own to check reads against: it serves what is on disk
    now, with an ETag recomputed from it. Granary must verify what it reads."""
    server, bucket = s3_bucket
    s3, data = server.client(), os.urandom(4096)
    put = s3.put_object(Bucket=bucket, Key="k", Body=data)
    damaged = bytearray(data)
    damaged[100:104] = bytes(b ^ 0xFF for b in damaged[100:104])
    (server.root / bucket / "k").write_bytes(damaged)

    got = s3.get_object(Bucket=bucket, Key="k")
    assert got["Body"].read() == bytes(damaged)
    assert got["ETag"] == f'"{_md5(damaged)}"' != put["ETag"]


def test_length_changed_behind_the_server_breaks_the_first_read(s3_bucket):
    """rclone caches the length: the first GET announces the old one and the body breaks off;
    the next GET serves the new bytes. Never the old bytes."""
    server, bucket = s3_bucket
    s3 = server.client()
    s3.put_object(Bucket=bucket, Key="k", Body=b"0123456789")
    (server.root / bucket / "k").write_bytes(b"0123456789 and more")
    first = s3.get_object(Bucket=bucket, Key="k")
    assert first["ContentLength"] == 10
    with pytest.raises(ResponseStreamingError):
        first["Body"].read()
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"0123456789 and more"


def test_content_md5_is_checked_but_sha256_is_only_stored(s3_bucket):
    """A wrong Content-MD5 is refused (BadDigest); x-amz-checksum-sha256 is stored and returned
    (HeadObject with ChecksumMode) but a wrong one is accepted, and it is lost on restart. Send
    Content-MD5 for the server to check an upload."""
    server, bucket = s3_bucket
    s3, data = server.client(), b"granule bytes"
    with pytest.raises(ClientError) as excinfo:
        s3.put_object(Bucket=bucket, Key="md5", Body=data,
                      ContentMD5=_b64(hashlib.md5(b"other").digest()))
    assert _error(excinfo) == ("BadDigest", 400)
    s3.put_object(Bucket=bucket, Key="md5", Body=data, ContentMD5=_b64(hashlib.md5(data).digest()))

    s3.put_object(Bucket=bucket, Key="sha", Body=data, ChecksumAlgorithm="SHA256")
    head = s3.head_object(Bucket=bucket, Key="sha", ChecksumMode="ENABLED")
    assert head["ChecksumSHA256"] == _b64(hashlib.sha256(data).digest())

    wrong = _b64(hashlib.sha256(b"other bytes").digest())
    s3.put_object(Bucket=bucket, Key="wrong", Body=data, ChecksumSHA256=wrong)
    assert s3.get_object(Bucket=bucket, Key="wrong")["Body"].read() == data
    assert s3.head_object(Bucket=bucket, Key="wrong", ChecksumMode="ENABLED")["ChecksumSHA256"] \
        == wrong


def test_no_versioning(s3_bucket):
    server, bucket = s3_bucket
    s3 = server.client()
    assert "VersionId" not in s3.put_object(Bucket=bucket, Key="k", Body=b"1")
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)
    with pytest.raises(ClientError) as excinfo:
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    assert _error(excinfo)[0] == "NotImplemented"


def test_objects_survive_kill_and_restart_but_metadata_does_not(s3_bucket):
    """Bytes are files under root; Content-Type, x-amz-meta-* and checksums live only in the
    server's memory."""
    server, bucket = s3_bucket
    s3, data = server.client(), os.urandom(1000)
    s3.put_object(Bucket=bucket, Key="k", Body=data, ContentType="application/x-netcdf",
                  Metadata={"granule": "g1"}, ChecksumAlgorithm="SHA256")
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["ContentType"] == "application/x-netcdf"
    assert {k.lower(): v for k, v in head["Metadata"].items()} == {"granule": "g1"}

    port, pid = server.port, server.pid
    server.kill9()
    with pytest.raises(EndpointConnectionError):
        server.client(retries={"max_attempts": 1}).head_object(Bucket=bucket, Key="k")
    server.restart()
    assert (server.port, server.pid != pid) == (port, True)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == data
    head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert head["ETag"] == f'"{_md5(data)}"'
    assert head["ContentType"] == "application/octet-stream"
    assert head["Metadata"] == {} and "ChecksumSHA256" not in head
