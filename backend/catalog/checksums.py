"""Streaming checksums of the kinds providers declare: MD5, SHA256, CKSUM (POSIX) and ADLER32.

Pure Python over C implementations (hashlib, zlib), so every type runs at disk speed. POSIX
`cksum` is the non-reflected CRC-32 of the data followed by its length; zlib's crc32 is the
reflected one, so bytes are bit-reversed in and the register bit-reversed out.
"""
import hashlib
import zlib

SUPPORTED = ("MD5", "SHA256", "CKSUM", "ADLER32")
CHUNK = 1 << 20

_REVERSE_BITS = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


def _reflect32(value):
    return int(f"{value:032b}"[::-1], 2)


class UnsupportedChecksum(ValueError):
    pass


class _Cksum:
    def __init__(self):
        self._crc = 0xFFFFFFFF  # zlib's pre-inversion turns this into a zero register
        self._length = 0

    def update(self, data):
        self._crc = zlib.crc32(bytes(data).translate(_REVERSE_BITS), self._crc)
        self._length += len(data)

    def hexdigest(self):
        crc = self._crc
        length = self._length
        tail = bytearray()
        while length:
            tail.append(length & 0xFF)
            length >>= 8
        crc = zlib.crc32(bytes(tail).translate(_REVERSE_BITS), crc)
        register = _reflect32(crc ^ 0xFFFFFFFF)
        return str(register ^ 0xFFFFFFFF)


class _Adler32:
    def __init__(self):
        self._value = 1

    def update(self, data):
        self._value = zlib.adler32(data, self._value)

    def hexdigest(self):
        return f"{self._value:08x}"


def hasher(kind):
    """A fresh streaming hasher with update(bytes) and hexdigest(). `kind` is a checksum type,
    or a callable that makes the hasher: a reader that wants more of the bytes than their
    checksum (the archive's read-back takes their block map on the way) passes its own."""
    if callable(kind):
        return kind()
    kind = normalise(kind)
    if kind == "MD5":
        return hashlib.md5(usedforsecurity=False)
    if kind == "SHA256":
        return hashlib.sha256()
    if kind == "CKSUM":
        return _Cksum()
    return _Adler32()


def normalise(kind):
    """Canonical name of a checksum type; raises UnsupportedChecksum naming what is supported."""
    key = str(kind or "").upper().replace("-", "").replace("_", "")
    aliases = {"SHA256": "SHA256", "MD5": "MD5", "CKSUM": "CKSUM", "ADLER32": "ADLER32"}
    if key not in aliases:
        raise UnsupportedChecksum(
            f"unsupported checksum type {kind!r}; use one of {', '.join(SUPPORTED)}"
        )
    return aliases[key]


def same(kind, a, b):
    """Compare two checksum values of one kind (hex case and CKSUM leading zeros ignored)."""
    if normalise(kind) == "CKSUM":
        try:
            return int(str(a)) == int(str(b))
        except ValueError:
            return False
    return str(a).strip().lower() == str(b).strip().lower()


def of_bytes(kind, data):
    h = hasher(kind)
    h.update(data)
    return h.hexdigest()


def of_file(kind, path, chunk=CHUNK):
    """Checksum and size of a file, read in large blocks."""
    h = hasher(kind)
    size = 0
    with open(path, "rb", buffering=0) as f:
        while block := f.read(chunk):
            h.update(block)
            size += len(block)
    return h.hexdigest(), size
