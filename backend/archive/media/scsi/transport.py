"""How a SCSI command reaches a device: over iSCSI with libiscsi (ctypes), or through the
kernel's SCSI generic driver (SG_IO on /dev/sg*). Both take a command descriptor block and
answer a Reply; the SSC and SMC commands above them are the same on either path.

libiscsi is driven through ctypes rather than a binding (cython-iscsi, which pyscsi's iSCSI
device needs, is unmaintained and has to be compiled against the headers): a handful of its
synchronous calls is all a tape drive needs. Data in goes straight to our buffer (an iovec);
the raw sense bytes of a CHECK CONDITION (with their FILEMARK/EOM/ILI bits) come from the
response, as SG_IO hands them back.
"""
import ctypes
import ctypes.util
import fcntl
import os
import threading
import time
from dataclasses import dataclass

GOOD, CHECK_CONDITION = 0, 2
NONE, READ, WRITE = 0, 1, 2        # libiscsi's enum scsi_xfer_dir


class TransportError(OSError):
    """The device cannot be reached (target gone, connection lost, no such device)."""


@dataclass
class Reply:
    status: int
    data: bytes = b""
    sense_key: int = 0
    asc: int = 0
    ascq: int = 0
    raw_sense: bytes = b""
    residual: int = 0


class _Sense(ctypes.Structure):
    # struct scsi_sense: error_type, key, ascq (ASC << 8 | ASCQ), then bit fields and a
    # pointer field packed into the last 4 bytes (16 bytes, as GCC lays it out)
    _fields_ = [("error_type", ctypes.c_ubyte), ("key", ctypes.c_int), ("ascq", ctypes.c_int),
                ("rest", ctypes.c_ubyte * 4)]


class _Data(ctypes.Structure):
    _fields_ = [("size", ctypes.c_int), ("data", ctypes.POINTER(ctypes.c_ubyte))]


class _Task(ctypes.Structure):
    """The head of libiscsi's struct scsi_task (scsi-lowlevel.h, libiscsi 1.19): only what
    is read back; the task is allocated and freed by libiscsi."""
    _fields_ = [("status", ctypes.c_int), ("cdb_size", ctypes.c_int),
                ("xfer_dir", ctypes.c_int), ("expxferlen", ctypes.c_int),
                ("cdb", ctypes.c_ubyte * 16), ("residual_status", ctypes.c_int),
                ("residual", ctypes.c_size_t), ("sense", _Sense), ("datain", _Data)]


class _Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _IscsiData(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("data", ctypes.c_void_p)]


def _outgoing(data):
    """(what keeps it alive, its address) of a command's data out, not copied when it is
    bytes or writable (a bytearray record); a read-only view is copied once."""
    if isinstance(data, bytes):
        return data, ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value
    try:
        held = (ctypes.c_char * len(data)).from_buffer(data)
    except TypeError:
        return _outgoing(bytes(data))
    return held, ctypes.addressof(held)


_lib, _lib_lock = None, threading.Lock()


def libiscsi():
    global _lib
    with _lib_lock:
        if _lib is None:
            name = ctypes.util.find_library("iscsi") or "libiscsi.so.7"
            try:
                lib = ctypes.CDLL(name)
            except OSError as exc:
                raise TransportError(f"libiscsi is not installed ({exc}): "
                                     "run scripts/system-deps.sh") from exc
            lib.iscsi_create_context.restype = ctypes.c_void_p
            lib.iscsi_create_context.argtypes = [ctypes.c_char_p]
            lib.iscsi_set_targetname.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            lib.iscsi_get_error.argtypes = [ctypes.c_void_p]
            lib.iscsi_get_error.restype = ctypes.c_char_p
            lib.iscsi_set_session_type.argtypes = [ctypes.c_void_p, ctypes.c_int]
            lib.iscsi_set_header_digest.argtypes = [ctypes.c_void_p, ctypes.c_int]
            lib.iscsi_set_timeout.argtypes = [ctypes.c_void_p, ctypes.c_int]
            lib.iscsi_set_noautoreconnect.argtypes = [ctypes.c_void_p, ctypes.c_int]
            lib.iscsi_full_connect_sync.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                    ctypes.c_int]
            lib.iscsi_logout_sync.argtypes = [ctypes.c_void_p]
            lib.iscsi_destroy_context.argtypes = [ctypes.c_void_p]
            lib.scsi_create_task.restype = ctypes.POINTER(_Task)
            lib.scsi_create_task.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                                             ctypes.c_int]
            lib.iscsi_scsi_command_sync.restype = ctypes.POINTER(_Task)
            lib.iscsi_scsi_command_sync.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                                    ctypes.POINTER(_Task),
                                                    ctypes.POINTER(_IscsiData)]
            lib.scsi_free_scsi_task.argtypes = [ctypes.POINTER(_Task)]
            lib.scsi_task_set_iov_in.argtypes = [ctypes.POINTER(_Task), ctypes.POINTER(_Iovec),
                                                 ctypes.c_int]
            _lib = lib
        return _lib


# how long a login is tried again while the target is down or not yet configured
RECONNECT_S = 15


class Iscsi:
    """One logical unit of an iSCSI target, on its own session (one per drive, one for the
    changer). `portal` is host:port, `target` the IQN."""

    def __init__(self, portal, target, lun, timeout_s=30):
        self.portal, self.target, self.lun, self.timeout_s = portal, target, int(lun), timeout_s
        self._ctx = None
        self._lock = threading.Lock()

    @property
    def where(self):
        return f"iscsi://{self.portal}/{self.target}/{self.lun}"

    def _connect(self):
        """Log in, trying again for up to RECONNECT_S while the target refuses or is not
        there yet, as an initiator waits out a target's recovery (open-iscsi's
        replacement_timeout): a target restarted in a few seconds costs no drive an error.
        A command lost with its session is not retried (the caller redoes its work)."""
        deadline = time.monotonic() + RECONNECT_S
        while True:
            try:
                return self._connect_once()
            except TransportError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.5)

    def _connect_once(self):
        lib = libiscsi()
        ctx = lib.iscsi_create_context(f"iqn.2026-11.org.granary:initiator-{os.getpid()}"
                                       .encode())
        if not ctx:
            raise TransportError("libiscsi could not create a context")
        lib.iscsi_set_targetname(ctx, self.target.encode())
        lib.iscsi_set_session_type(ctx, 2)
        lib.iscsi_set_header_digest(ctx, 0)
        lib.iscsi_set_timeout(ctx, self.timeout_s)
        lib.iscsi_set_noautoreconnect(ctx, 1)
        if lib.iscsi_full_connect_sync(ctx, self.portal.encode(), self.lun) != 0:
            error = lib.iscsi_get_error(ctx).decode(errors="replace")
            lib.iscsi_destroy_context(ctx)
            raise TransportError(f"{self.where} is unreachable: {error}")
        self._ctx = ctx

    def command(self, cdb, data_out=None, data_in=0):
        """Send one command; its Reply. Raises TransportError when the target is gone."""
        lib = libiscsi()
        with self._lock:
            if self._ctx is None:
                self._connect()
            direction = WRITE if data_out is not None else READ if data_in else NONE
            length = len(data_out) if data_out is not None else data_in
            task = lib.scsi_create_task(len(cdb), bytes(cdb), direction, length)
            payload, buffer, view, held = None, None, None, None
            if data_in:
                # data in lands in our buffer; libiscsi's own datain then holds only the sense
                # data of a CHECK CONDITION (a short record's bytes come with its ILI sense). A
                # bytearray, handed back as it is: a record is not copied on its way up
                buffer = bytearray(data_in)
                view = (ctypes.c_char * data_in).from_buffer(buffer)
                iov = _Iovec(ctypes.addressof(view), data_in)
                lib.scsi_task_set_iov_in(task, ctypes.byref(iov), 1)
            if data_out is not None:
                held, address = _outgoing(data_out)
                payload = _IscsiData(len(data_out), address)
            done = lib.iscsi_scsi_command_sync(self._ctx, self.lun, task,
                                               ctypes.byref(payload) if payload else None)
            del held    # the record may be resized again
            if not done:
                # the session failed: the task stays with the context's cancelled PDUs (freeing
                # it here as well corrupted the heap when the target was killed mid-command)
                error = lib.iscsi_get_error(self._ctx).decode(errors="replace")
                self._drop()
                raise TransportError(f"{self.where}: {error}")
            del view    # the bytearray can be cut to the length received
            try:
                return self._reply(done.contents, buffer, data_in)
            finally:
                lib.scsi_free_scsi_task(done)

    def _reply(self, t, buffer, asked):
        if t.status >= 0x0F000000:    # libiscsi's own: cancelled, error, timeout
            self._drop()
            what = {0x0F000000: "was cancelled (the session was lost)",
                    0x0F000002: "timed out"}.get(t.status, "failed on the session")
            raise TransportError(f"{self.where}: the command {what}")
        got = asked - t.residual if t.residual_status == 1 else asked
        data = b""
        if buffer is not None:
            del buffer[max(got, 0):]
            data = buffer
        raw = b""
        if t.status == CHECK_CONDITION and t.datain.size > 2:
            # the response's data segment: a 2-byte length, then the sense bytes
            raw = ctypes.string_at(t.datain.data, t.datain.size)[2:]
        return Reply(t.status, data, t.sense.key & 0x0F, t.sense.ascq >> 8 & 0xFF,
                     t.sense.ascq & 0xFF, raw_sense=raw, residual=t.residual)

    def _drop(self):
        if self._ctx is not None:
            libiscsi().iscsi_destroy_context(self._ctx)
            self._ctx = None

    def reset(self):
        """Forget the session without logging out (the target may be gone): the next
        command logs in afresh."""
        with self._lock:
            self._drop()

    def close(self):
        with self._lock:
            if self._ctx is not None:
                libiscsi().iscsi_logout_sync(self._ctx)
            self._drop()


class _SgIoHdr(ctypes.Structure):
    """struct sg_io_hdr (scsi/sg.h)."""
    _fields_ = [("interface_id", ctypes.c_int), ("dxfer_direction", ctypes.c_int),
                ("cmd_len", ctypes.c_ubyte), ("mx_sb_len", ctypes.c_ubyte),
                ("iovec_count", ctypes.c_ushort), ("dxfer_len", ctypes.c_uint),
                ("dxferp", ctypes.c_void_p), ("cmdp", ctypes.c_void_p),
                ("sbp", ctypes.c_void_p), ("timeout", ctypes.c_uint),
                ("flags", ctypes.c_uint), ("pack_id", ctypes.c_int),
                ("usr_ptr", ctypes.c_void_p), ("status", ctypes.c_ubyte),
                ("masked_status", ctypes.c_ubyte), ("msg_status", ctypes.c_ubyte),
                ("sb_len_wr", ctypes.c_ubyte), ("host_status", ctypes.c_ushort),
                ("driver_status", ctypes.c_ushort), ("resid", ctypes.c_int),
                ("duration", ctypes.c_uint), ("info", ctypes.c_uint)]


SG_IO = 0x2285
SG_DXFER_NONE, SG_DXFER_TO_DEV, SG_DXFER_FROM_DEV = -1, -2, -3


class SgIo:
    """A device node of the SCSI generic driver (/dev/sgN): the same commands through the
    SG_IO ioctl, with the raw sense bytes."""

    def __init__(self, path, timeout_s=600):
        self.path, self.timeout_s, self._fd = path, timeout_s, None
        self._lock = threading.Lock()

    @property
    def where(self):
        return self.path

    def command(self, cdb, data_out=None, data_in=0):
        with self._lock:
            if self._fd is None:
                try:
                    self._fd = os.open(self.path, os.O_RDWR)
                except OSError as exc:
                    raise TransportError(f"{self.path}: {exc}") from exc
            cdb_buf = ctypes.create_string_buffer(bytes(cdb), len(cdb))
            sense = ctypes.create_string_buffer(96)
            if data_out is not None:
                buf = ctypes.create_string_buffer(bytes(data_out), len(data_out))
                direction, length = SG_DXFER_TO_DEV, len(data_out)
            else:
                buf = ctypes.create_string_buffer(max(data_in, 1))
                direction, length = (SG_DXFER_FROM_DEV, data_in) if data_in else (
                    SG_DXFER_NONE, 0)
            hdr = _SgIoHdr(interface_id=ord("S"), dxfer_direction=direction,
                           cmd_len=len(cdb), mx_sb_len=len(sense), dxfer_len=length,
                           dxferp=ctypes.addressof(buf), cmdp=ctypes.addressof(cdb_buf),
                           sbp=ctypes.addressof(sense), timeout=self.timeout_s * 1000)
            try:
                fcntl.ioctl(self._fd, SG_IO, hdr)
            except OSError as exc:
                raise TransportError(f"{self.path}: {exc}") from exc
            if hdr.host_status or (hdr.driver_status & 0x0F) not in (0, 8):
                raise TransportError(f"{self.path}: host status {hdr.host_status}, "
                                     f"driver status {hdr.driver_status}")
            raw = sense.raw[:hdr.sb_len_wr]
            got = length - hdr.resid if direction == SG_DXFER_FROM_DEV else 0
            key, asc, ascq = decode_sense(raw)
            return Reply(hdr.status & 0x3E, buf.raw[:got], key, asc, ascq, raw, hdr.resid)

    def close(self):
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    reset = close


def decode_sense(raw):
    """(key, ASC, ASCQ) of fixed (0x70/0x71) or descriptor (0x72/0x73) sense data (SPC-4)."""
    if len(raw) < 3:
        return 0, 0, 0
    if raw[0] & 0x7F in (0x72, 0x73):
        return raw[1] & 0x0F, raw[2] if len(raw) > 2 else 0, raw[3] if len(raw) > 3 else 0
    return (raw[2] & 0x0F, raw[12] if len(raw) > 12 else 0, raw[13] if len(raw) > 13 else 0)
