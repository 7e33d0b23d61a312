"""granary-get's own parts, without a server: every checksum type against an independent
source (coreutils cksum, published test vectors), names from a hostile listing kept inside the
output folder, and progress that never reads 100 % while a file is missing."""
import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "scripts" / "granary-get"
_loader = importlib.machinery.SourceFileLoader("granary_get", str(CLIENT))
_spec = importlib.util.spec_from_loader("granary_get", _loader)
gg = importlib.util.module_from_spec(_spec)
_loader.exec_module(gg)


def _check(tmp_path, kind, expected, data):
    path = tmp_path / "f"
    path.write_bytes(data)
    checksum = gg.Checksum(kind, expected)
    return checksum.same(checksum.of(path))


@pytest.mark.parametrize("size", [0, 1, 255, 256, 65536, 1 << 20 | 7])
def test_cksum_is_coreutils_cksum(tmp_path, size):
    data = bytes((i * 7 + 3) % 251 for i in range(size))
    path = tmp_path / "f"
    path.write_bytes(data)
    want = subprocess.run(["cksum", str(path)], capture_output=True, text=True,
                          check=True).stdout.split()[0]
    assert gg.Checksum("CKSUM", want).of(path) == want
    assert _check(tmp_path, "cksum", want, data)
    assert not _check(tmp_path, "CKSUM", str((int(want) + 1) % 2**32), data)


@pytest.mark.parametrize("kind, expected, data", [
    ("MD5", "d41d8cd98f00b204e9800998ecf8427e", b""),                       # RFC 1321
    ("md5", "900150983CD24FB0D6963F7D28E17F72", b"abc"),                    # RFC 1321, upper
    ("SHA256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", b"abc"),
    ("sha-256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", b"abc"),
    ("ADLER32", "11e60398", b"Wikipedia"),                                  # Adler-32 example
    # the multihash README's example: sha2-256 of "multihash", hex and base58btc
    ("MULTIHASH", "12209cbc07c3f991725836a3aa2a581ca2029198aa420b9d99bc0e131d9f3e2cbe47",
     b"multihash"),
    ("multihash", "QmYtUc4iTCbbfVSDNKvtQqrfyezPPnFvE33wFmutw9PBBk", b"multihash"),
    ("multihash", "zQmYtUc4iTCbbfVSDNKvtQqrfyezPPnFvE33wFmutw9PBBk", b"multihash"),
    ("MULTIHASH", "1114a9993e364706816aba3e25717850c26c9cd0d89d", b"abc"),   # sha1 (FIPS 180)
])
def test_checksums_match_published_vectors(tmp_path, kind, expected, data):
    assert _check(tmp_path, kind, expected, data)
    assert not _check(tmp_path, kind, expected, data + b"x")


@pytest.mark.parametrize("kind, expected", [
    ("CRC64", "0"), ("", "x"), ("MULTIHASH", "1203abcd"), ("MULTIHASH", "ff0100"),
    ("MULTIHASH", "not base58 0OIl"), ("MULTIHASH", "12"),
])
def test_checksums_it_cannot_compute_are_refused(kind, expected):
    with pytest.raises(gg.ChecksumUnknown):
        gg.Checksum(kind, expected)


def test_names_from_the_listing_stay_inside_the_output_folder():
    hostile = ["../../etc/passwd", "/abs/path", "..", ".", "", "a\\b", "nul\x00byte",
               "line\nbreak", "ok.dat", "ok.dat"]
    listing = {"links": [{"granule": "../up", "name": name, "file_id": i, "size": 1,
                          "checksum_type": "MD5", "checksum": "0" * 32, "url": "http://x/"}
                         for i, name in enumerate(hostile)]}
    paths = [row["path"] for row in gg.plan(listing)]
    assert len(set(paths)) == len(paths)
    for path in paths:
        parts = Path(path).parts
        assert len(parts) == 2 and not Path(path).is_absolute()
        assert all(p not in ("", ".", "..") and "/" not in p and "\x00" not in p
                   and "\n" not in p for p in parts)


def test_progress_never_reads_100_while_a_file_is_missing():
    rows = [{"path": "a", "size": 10**9}, {"path": "b", "size": 1}]
    said = []
    results = [{"path": "a", "size": 10**9, "outcome": "ok"},
               {"path": "b", "size": 1, "outcome": "failed"}]
    assert gg._progress(results, rows, said.append) == 99
    assert "1 failed" in said[0]
    results[1]["outcome"] = "skipped"
    assert gg._progress(results, rows, said.append) == 100
    empty = [{"path": "e", "size": 0}]
    assert gg._progress([], empty, said.append) == 0


@pytest.mark.parametrize("value, seconds", [("7", 7), ("0", 0), ("soon", None), ("", None),
                                            ("Wed, 21 Oct 2015 07:28:00 GMT", 0)])
def test_retry_after(value, seconds):
    assert gg.retry_after({"Retry-After": value}) == seconds


def test_backoff_grows_and_is_jittered():
    for errors in range(1, 12):
        step = min(300.0, 2.0 ** (errors - 1))
        waits = {gg.backoff(errors) for _ in range(50)}
        assert all(step / 2 <= w <= step for w in waits)
        assert len(waits) > 1


def test_usage_errors_exit_2(tmp_path):
    def run(*args, env=None):
        return subprocess.run([sys.executable, str(CLIENT), *args, "-o", str(tmp_path)],
                              capture_output=True, text=True, env=env or {"PATH": "/usr/bin"})
    assert run().returncode == 2
    assert "--server" in run("12").stderr
    assert "token" in run("12", "--server", "http://127.0.0.1:9").stderr
    assert run("ftp://x/links/", "--token", "t").returncode == 2
    unreachable = run("http://127.0.0.1:9/api/v1/orders/1/links/", "--token", "t", "--retries",
                      "0")
    assert unreachable.returncode == 2 and "network error" in unreachable.stderr
