"""Reading a cartridge of tgt's virtual tape library straight from its backing file, without
Granary: tgt's on-disk format (usr/bs_ssc.h) is a chain of 48-byte big-endian block headers
(checksum, on-disk size, block size, type, number, previous, current, next), each followed by
its block's bytes; the first two blocks are BOT and the medium auxiliary memory."""
import struct

HEADER = struct.Struct(">4sIIIQQQQ")
BOT, DATA, EOD, FILEMARK = 0x10, 0x02, 0x20, 0x40


def records(path):
    """[(type, bytes)] of the cartridge from its start to its end of data."""
    out = []
    with open(path, "rb") as f:
        offset = 0
        while True:
            f.seek(offset)
            _, ondisk, _, kind, _, _, current, following = HEADER.unpack(f.read(HEADER.size))
            if kind == EOD:
                return out
            if kind != BOT:
                f.seek(current + HEADER.size)
                out.append((kind, f.read(ondisk)))
            offset = following


def first_file(path):
    """The bytes of the data records before the first filemark (the volume's tar stream)."""
    data = bytearray()
    for kind, body in records(path):
        if kind == FILEMARK:
            break
        if kind == DATA:
            data += body
    return bytes(data)


def file_offset(path, stream_offset):
    """Where byte `stream_offset` of the tar stream lies in the backing file."""
    with open(path, "rb") as f:
        offset, before = 0, 0
        while True:
            f.seek(offset)
            _, ondisk, _, kind, _, _, current, following = HEADER.unpack(f.read(HEADER.size))
            if kind in (EOD, FILEMARK):
                raise ValueError(f"byte {stream_offset} lies past the end of {path}")
            if kind == DATA and stream_offset < before + ondisk:
                return current + HEADER.size + stream_offset - before
            if kind == DATA:
                before += ondisk
            offset = following
