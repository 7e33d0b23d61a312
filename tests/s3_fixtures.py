"""Fixtures for a real S3 server (tests/s3_server.py): one rclone process for the whole session,
since it starts in well under a second but a session may have many S3 tests, and a fresh bucket
per test, so tests do not see each other's objects."""
import uuid

import pytest

from tests.s3_server import S3Server


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    server = S3Server(root=tmp_path_factory.mktemp("s3-root"))
    server.start()
    yield server
    server.close()


@pytest.fixture
def s3_bucket(s3_server):
    """(server, bucket name): a bucket of its own for this test. If a test stopped or killed the
    server, it is started again (same port, same root) for the next one."""
    if s3_server.pid is None:
        s3_server.start()
    bucket = f"test-{uuid.uuid4().hex[:16]}"
    s3_server.client().create_bucket(Bucket=bucket)
    yield s3_server, bucket
    if s3_server.pid is None:
        s3_server.start()


def copy_bytes(s3, copy):
    """An object copy's bytes as a plain S3 client sees them, not through Granary's reader: the
    object, or for a member of a pack (small files share one tar object), the member Python's
    tarfile finds at the copy's data offset."""
    import io
    import tarfile

    data = s3.get_object(Bucket=copy.bucket.bucket, Key=copy.key)["Body"].read()
    if not copy.data_offset:
        return data
    with tarfile.open(fileobj=io.BytesIO(data)) as pack:
        member = next(m for m in pack.getmembers() if m.offset_data == copy.data_offset)
        return pack.extractfile(member).read()
