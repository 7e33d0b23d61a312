"""Checksums agree with the reference tools, whatever the chunking."""
import hashlib
import os
import subprocess
import zlib

import pytest

from backend.catalog import checksums


@pytest.mark.parametrize("data", [b"", b"a", b"hello world\n", os.urandom(3_000_001)])
def test_cksum_matches_posix_cksum(tmp_path, data):
    path = tmp_path / "f"
    path.write_bytes(data)
    expected = subprocess.run(["cksum", str(path)], capture_output=True, text=True,
                              check=True).stdout.split()[0]
    assert checksums.of_file("CKSUM", path)[0] == expected
    assert checksums.of_file("CKSUM", path, chunk=7)[0] == expected


def test_other_kinds_match_hashlib_and_zlib(tmp_path):
    data = os.urandom(1_000_003)
    path = tmp_path / "f"
    path.write_bytes(data)
    assert checksums.of_file("md5", path, chunk=4096) == (hashlib.md5(data).hexdigest(), len(data))
    assert checksums.of_file("SHA-256", path)[0] == hashlib.sha256(data).hexdigest()
    assert checksums.of_file("ADLER32", path, chunk=999)[0] == f"{zlib.adler32(data):08x}"


def test_unsupported_type_names_the_supported_ones():
    with pytest.raises(checksums.UnsupportedChecksum, match="use one of MD5, SHA256, CKSUM"):
        checksums.hasher("CRC64")


def test_comparison_ignores_case_and_cksum_zeros():
    assert checksums.same("MD5", "ABCDEF", "abcdef")
    assert checksums.same("CKSUM", "0042", "42")
    assert not checksums.same("CKSUM", "42", "x")
