"""SSC-3 tape drive and SMC-3 media changer commands, built byte by byte from the standards'
command descriptor blocks (each a few fixed fields), and their sense data turned into errors
an operator reads: not ready, medium error, hardware error, write protected, end of medium.

A transport (transport.Iscsi or transport.SgIo) carries them.
"""
import struct
from dataclasses import dataclass

from .transport import CHECK_CONDITION, GOOD

# sense keys (SPC-4 table 28)
NO_SENSE, RECOVERED, NOT_READY, MEDIUM_ERROR, HARDWARE_ERROR = 0x0, 0x1, 0x2, 0x3, 0x4
ILLEGAL_REQUEST, UNIT_ATTENTION, DATA_PROTECT, BLANK_CHECK = 0x5, 0x6, 0x7, 0x8
VOLUME_OVERFLOW = 0xD
KEY_NAMES = {NOT_READY: "not ready", MEDIUM_ERROR: "medium error",
             HARDWARE_ERROR: "hardware error", ILLEGAL_REQUEST: "illegal request",
             UNIT_ATTENTION: "unit attention", DATA_PROTECT: "write protected",
             BLANK_CHECK: "blank check", VOLUME_OVERFLOW: "volume overflow"}


class ScsiError(OSError):
    """A command ended in CHECK CONDITION; `reason` says what the sense data means."""

    def __init__(self, reason, key=0, asc=0, ascq=0):
        super().__init__(reason)
        self.reason, self.key, self.asc, self.ascq = reason, key, asc, ascq

    def __str__(self):
        return f"{self.reason} (sense {self.key:X}/{self.asc:02X}/{self.ascq:02X})"


class NotReady(ScsiError):
    """No cartridge in the drive, or the drive is becoming ready."""


class MediumFault(ScsiError):
    """The cartridge failed (read or write error, corrupt format): the cartridge's fault."""


class HardwareFault(ScsiError):
    """The drive failed: the drive's fault."""


class WriteProtected(ScsiError):
    """The cartridge (or the drive) refuses writes."""


class EndOfMedium(ScsiError):
    """The write reached the end of the cartridge (early warning or overflow)."""


class EndOfData(ScsiError):
    """A read or space met blank tape: nothing was written past here."""


class FilemarkMet(ScsiError):
    """A read or space stopped at a filemark (the position is past it)."""


class Refused(ScsiError):
    """The device does not do this command (ILLEGAL REQUEST)."""


def raise_for(reply, command, writing=False):
    """Raise the ScsiError the reply's sense data means; nothing for GOOD."""
    if reply.status == GOOD:
        return
    if reply.status != CHECK_CONDITION:
        raise HardwareFault(f"{command}: SCSI status {reply.status:#x}")
    key, asc, ascq = reply.sense_key, reply.asc, reply.ascq
    raw = reply.raw_sense
    filemark = (len(raw) > 2 and raw[2] & 0x80) or (asc, ascq) == (0, 1)
    eom = (len(raw) > 2 and raw[2] & 0x40) or (asc, ascq) in ((0, 2), (0, 4))
    name = KEY_NAMES.get(key, f"sense key {key:#x}")
    if key == NO_SENSE and filemark:
        raise FilemarkMet(f"{command}: filemark", key, asc, ascq)
    if key == VOLUME_OVERFLOW or (key == NO_SENSE and (eom or (writing and not raw))):
        # without the raw sense (no EOM bit), a write's CHECK CONDITION with NO SENSE is the
        # early warning of the end of the medium (SSC-3 4.2.5)
        raise EndOfMedium(f"{command}: end of medium", key, asc, ascq)
    if key == BLANK_CHECK or (asc, ascq) == (0, 5):
        raise EndOfData(f"{command}: end of data", key, asc, ascq)
    kind = {NOT_READY: NotReady, MEDIUM_ERROR: MediumFault, HARDWARE_ERROR: HardwareFault,
            DATA_PROTECT: WriteProtected, ILLEGAL_REQUEST: Refused}.get(key, ScsiError)
    raise kind(f"{command}: {name}", key, asc, ascq)


def _b24(n):
    return (n & 0xFFFFFF).to_bytes(3, "big")


@dataclass
class Inquiry:
    device_type: int   # 0x01 sequential access (tape), 0x08 medium changer
    vendor: str
    product: str
    revision: str


class Device:
    def __init__(self, transport):
        self.transport = transport

    @property
    def where(self):
        return self.transport.where

    def _do(self, name, cdb, data_out=None, data_in=0, writing=False):
        reply = self.transport.command(cdb, data_out, data_in)
        if reply.status != GOOD and reply.sense_key == UNIT_ATTENTION:
            reply = self.transport.command(cdb, data_out, data_in)   # reported once
        raise_for(reply, name, writing)
        return reply

    def test_unit_ready(self):
        self._do("TEST UNIT READY", bytes(6))

    def inquiry(self):
        data = self._do("INQUIRY", bytes([0x12, 0, 0, 0, 96, 0]), data_in=96).data
        text = data.decode("ascii", "replace")
        return Inquiry(data[0] & 0x1F, text[8:16].strip(), text[16:32].strip(),
                       text[32:36].strip())

    def close(self):
        self.transport.close()


class TapeDrive(Device):
    """An SSC drive in variable-block mode: one WRITE(6) writes one record of its length."""

    def rewind(self):
        self._do("REWIND", bytes([0x01, 0, 0, 0, 0, 0]))

    def load(self, load=True):
        self._do("LOAD UNLOAD", bytes([0x1B, 0, 0, 0, 1 if load else 0, 0]))

    def read_block_limits(self):
        """(largest, smallest) record the drive takes."""
        data = self._do("READ BLOCK LIMITS", bytes([0x05, 0, 0, 0, 0, 0]), data_in=6).data
        return int.from_bytes(data[1:4], "big"), int.from_bytes(data[4:6], "big")

    def write(self, record):
        self._do("WRITE(6)", bytes([0x0A, 0]) + _b24(len(record)) + b"\0", data_out=record,
                 writing=True)

    def read(self, length):
        """One record (at most `length` bytes; a shorter record comes back short)."""
        reply = self.transport.command(bytes([0x08, 0]) + _b24(length) + b"\0", None, length)
        raw = reply.raw_sense
        ili = (len(raw) > 2 and raw[2] & 0x20 and not raw[2] & 0xC0) or (
            not raw and (reply.asc, reply.ascq) == (0, 0))
        if reply.status == CHECK_CONDITION and reply.sense_key == NO_SENSE and ili:
            # incorrect length: the record is shorter than asked; the sense's INFORMATION
            # field holds the difference (SSC-3 4.2.23). tgt 1.0.85 then sends only
            # (asked - record) bytes and answers the record's length as the residual: the
            # record is read again with its exact length, once the head is back before it.
            if len(raw) > 6 and raw[0] & 0x80:
                actual = length - int.from_bytes(raw[3:7], "big", signed=True)
                if 0 < actual < length:
                    self.space(-1)
                    return self.read(actual)
            return reply.data
        raise_for(reply, "READ(6)")
        return reply.data

    def write_filemarks(self, count=1):
        self._do("WRITE FILEMARKS", bytes([0x10, 0]) + _b24(count) + b"\0", writing=True)

    def space(self, count, code=0):
        """SPACE `count` records (code 0), filemarks (1) or to end of data (3); negative
        counts go backwards."""
        if count or code == 3:
            self._do("SPACE", bytes([0x11, code]) + _b24(count) + b"\0")

    def locate(self, block):
        self._do("LOCATE(10)", bytes([0x2B, 0, 0]) + struct.pack(">I", block) + bytes(3))

    def read_position(self):
        """The current logical block, or None when the drive says the position is unknown."""
        data = self._do("READ POSITION", bytes([0x34, 0] + [0] * 8), data_in=20).data
        if len(data) < 8 or data[0] & 0x04:     # BPU: block position unknown
            return None
        return struct.unpack(">I", data[4:8])[0]


@dataclass
class Element:
    """One element of a changer as READ ELEMENT STATUS reports it."""

    kind: int          # 1 transport, 2 storage slot, 3 import/export, 4 drive
    address: int
    full: bool
    barcode: str = ""
    source: int = 0    # where the cartridge came from (valid when non-zero)


class Changer(Device):
    """An SMC media changer: where cartridges are and MOVE MEDIUM between elements."""

    TRANSPORT, SLOT, PORT, DRIVE = 1, 2, 3, 4

    def elements(self, kinds=(SLOT, PORT, DRIVE), allocation=65536):
        """The elements of `kinds` with their barcodes (VOLTAG), asked a kind at a time: tgt
        declares its transport element's descriptor 16 bytes longer than it sends."""
        found = []
        for kind in kinds:
            cdb = (bytes([0xB8, 0x10 | kind]) + struct.pack(">HH", 0, 0xFFFF) + b"\0"
                   + _b24(allocation) + b"\0\0")
            found += parse_elements(self._do("READ ELEMENT STATUS", cdb,
                                             data_in=allocation).data)
        return found

    def move(self, source, destination, transport=0):
        self._do("MOVE MEDIUM", bytes([0xA5, 0]) + struct.pack(">HHH", transport, source,
                                                               destination) + bytes(4))


def parse_elements(data):
    """The element descriptors of READ ELEMENT STATUS data (SMC-3 6.11)."""
    if len(data) < 8:
        return
    end = 8 + int.from_bytes(data[5:8], "big")
    page = 8
    while page + 8 <= min(end, len(data)):
        kind, flags = data[page], data[page + 1]
        size = int.from_bytes(data[page + 2:page + 4], "big")
        length = int.from_bytes(data[page + 5:page + 8], "big")
        at = page + 8
        # tgt's report counts 8 bytes fewer than its pages hold and sends only that much: the
        # last descriptor arrives cut after its barcode, which is all that is read of it
        needed = 44 if flags & 0x80 else 12
        while size and at + size <= page + 8 + length and at + needed <= len(data):
            d = data[at:at + size]
            barcode = d[12:44].decode("ascii", "replace").strip(" \0") if flags & 0x80 else ""
            source = int.from_bytes(d[10:12], "big") if d[9] & 0x80 else 0
            yield Element(kind & 0x0F, int.from_bytes(d[0:2], "big"), bool(d[2] & 1),
                          barcode, source)
            at += size
        page += 8 + length
