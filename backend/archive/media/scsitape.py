"""A volume on a cartridge of a SCSI tape library, behind the same seam as the emulated tape.

The cartridge holds the volume's pax tar stream itself (the label member first), cut into
records of RECORD bytes written by WRITE(6) in variable-block mode, the last record short, and
one filemark after the end-of-archive blocks: `dd` of the tape (or of tgt's backing file, its
block headers skipped) piped to `tar` lists every member. A byte offset of the stream is record
offset // RECORD: a recall positions with LOCATE when the drive takes it, else (tgt refuses
LOCATE and answers READ POSITION with "position unknown") with SPACE over records, from the
position the medium keeps itself. Filemarks would serve positioning only where SPACE over
records cannot (none here): the one filemark ends the volume.

An append rewrites from the record holding the end of data (its head kept), as a drive
overwrites from a position: whatever a crashed write left past the catalog's end is gone.
The end of medium taken back to the start of the member being written (VolumeFull); the
members before it stay.
"""
import io
import queue
import threading
from contextlib import ExitStack, contextmanager

from backend.catalog import checksums

from .. import tape
from . import CopyMissing, DriveError, Health, Listed, MediumError, WriteProtected
from .scsi import commands as scsi
from .scsi.library import CartridgeMissing, LabelMismatch, NoDriveFree, library_for
from .scsi.transport import TransportError
from .stages import Stage

# WRITE(6) record size: READ BLOCK LIMITS' largest on tgt (1 MiB); of 64 KiB, 256 KiB, 1 MiB
# and 4 MiB... (bench tape), the fastest writes on this machine, and the volumes' tape.BLOCK.
RECORD = 1 << 20
# a read over this many records or more is read ahead by a thread, this many records deep
AHEAD_FROM, AHEAD_DEPTH = 3, 8
# records handed to the drive's thread while the next is read from its file
WRITE_DEPTH = 4


@contextmanager
def scsi_errors(label, library=None):
    """SCSI and library failures as the seam's: the cartridge's (MediumError), the drive's
    (DriveError), the end of medium (tape.VolumeFull), blank tape (CopyMissing). A lost
    session drops all the library's sessions."""
    try:
        yield
    except (tape.VolumeError, MediumError, DriveError):
        raise
    except scsi.WriteProtected as exc:
        raise WriteProtected(f"cartridge {label} is write protected ({exc})", whole=True) from exc
    except scsi.MediumFault as exc:
        raise MediumError(f"cartridge {label}: {exc}", whole=True) from exc
    except (scsi.EndOfData, scsi.FilemarkMet) as exc:
        raise CopyMissing(f"cartridge {label} ends before the copy ({exc})") from exc
    except scsi.EndOfMedium as exc:
        raise tape.VolumeFull(f"cartridge {label}: {exc}") from exc
    except (CartridgeMissing, LabelMismatch) as exc:
        raise MediumError(str(exc), whole=True) from exc
    except (TransportError, NoDriveFree, scsi.ScsiError) as exc:
        if library is not None and isinstance(exc, TransportError):
            library.reset()
        raise DriveError(f"tape drive ({label}): {exc}") from exc


def seek(m, record):
    """Put the head before `record`: LOCATE, or SPACE from where it is (REWIND first when
    the position is unknown or nearer BOT)."""
    if m.position == record:
        return
    if m.state.get("locate", True):
        try:
            m.drive.locate(record)
            m.position = record
            return
        except scsi.Refused:
            m.state["locate"] = False
    if m.position is None or record < m.position - record:
        m.drive.rewind()
        m.position = 0
    m.drive.space(record - m.position)
    m.position = record


class Reader:
    """Records of a mounted cartridge read in order, the last one kept (small members share)."""

    def __init__(self, m, record=RECORD):
        self.m, self.size = m, record

    def record(self, k):
        cached = self.m.cache.get("record")
        if cached and cached[0] == k:
            return cached[1]
        seek(self.m, k)
        try:
            data = self.m.drive.read(self.size)
        except scsi.FilemarkMet:
            self.m.position = k + 1
            raise
        self.m.position = k + 1
        self.m.cache["record"] = (k, data)
        return data

    def chunks(self, offset, length):
        """The bytes of [offset, offset + length) as views of the records holding them; a
        range over several records is read ahead by a thread (see ahead)."""
        first, last = offset // self.size, (offset + length - 1) // self.size
        cached = self.m.cache.get("record")
        if cached and cached[0] == first:     # where the member before ended
            yield from self._pieces([cached], offset, length)
            offset, length = (first + 1) * self.size, offset + length - (first + 1) * self.size
            first += 1
        if length <= 0:
            return
        if last - first + 1 >= AHEAD_FROM:
            records = self.ahead(first, last)
        else:
            records = ((k, self.record(k)) for k in range(first, last + 1))
        try:
            yield from self._pieces(records, offset, length)
        finally:
            records.close()

    def _pieces(self, records, offset, length):
        """The parts of (k, record) in order that hold [offset, offset + length); a short
        record before the end is the end of the stream."""
        for k, data in records:
            start = offset - k * self.size
            piece = memoryview(data)[start:start + length]
            if not len(piece) or (len(piece) < length and len(data) < self.size):
                raise scsi.EndOfData(f"record {k} ends before byte {offset + len(piece)}")
            yield piece
            offset += len(piece)
            length -= len(piece)

    def ahead(self, first, last, depth=AHEAD_DEPTH):
        """Records first..last, read in a thread up to `depth` records ahead of the caller, who
        hashes and stores one while the drive sends the next (the READ releases the GIL). The
        thread alone moves the head until the caller has them all or stops."""
        got, stop = queue.Queue(depth), threading.Event()

        def read():
            try:
                for k in range(first, last + 1):
                    if stop.is_set():
                        return
                    got.put((k, self.record(k)))
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                got.put((None, exc))

        worker = threading.Thread(target=read, name="tape-read-ahead", daemon=True)
        worker.start()
        try:
            for _ in range(first, last + 1):
                k, data = got.get()
                if k is None:
                    raise data
                yield k, data
        finally:
            stop.set()
            while worker.is_alive():     # free a put it may be blocked in
                try:
                    got.get(timeout=0.05)
                except queue.Empty:
                    pass
            worker.join()


class Stream(io.RawIOBase):
    """The tar stream of a cartridge from its start, until the filemark or blank tape."""

    def __init__(self, reader):
        self.reader, self.k, self.rest, self.length = reader, 0, b"", 0

    def readable(self):
        return True

    def readinto(self, b):
        if not self.rest:
            try:
                self.rest = self.reader.record(self.k)
            except (scsi.EndOfData, scsi.FilemarkMet):
                return 0
            self.k += 1
            self.length += len(self.rest)
        n = min(len(b), len(self.rest))
        b[:n] = self.rest[:n]
        self.rest = self.rest[n:]
        return n


def check_label(m, label, record=RECORD):
    """The first member of the cartridge must be the label of `label`."""
    try:
        first = Reader(m, record).record(0)
    except (scsi.EndOfData, scsi.FilemarkMet) as exc:
        raise LabelMismatch(f"cartridge {label} is blank: it carries no volume label") from exc
    try:
        members = tape.scan_stream(io.BytesIO(first))
    except tape.VolumeError:
        members = []
    found = members[0].headers.get("label") if members and members[0].is_label else None
    if found != label:
        raise LabelMismatch(f"the cartridge with barcode {label} is labelled "
                            f"{found or 'with no Granary label'}")


class ScsiTapeVolume:
    medium = "tape"

    def __init__(self, config, label, record=RECORD, drive=None):
        """`drive`: the index in config['drives'] of the SCSI drive to mount the cartridge
        in (the mover's logical drive's own); None: any free one."""
        self.config, self.label, self.record, self.drive = config, label, record, drive
        self._end = None

    @property
    def library(self):
        return library_for(self.config)

    @contextmanager
    def session(self, check=True):
        """The cartridge mounted for one operation; its label checked when it was mounted."""
        with scsi_errors(self.label, self.library), \
                self.library.mounted(self.label, self.drive) as m:
            if m.moved and check:
                check_label(m, self.label, self.record)
            yield m

    def held(self):
        """Keep the cartridge mounted through a batch of operations (see Library.held)."""
        return self.library.held(self.label)   # the first mount in it picks the drive

    def writer(self, end_of_data):
        return ScsiVolumeWriter(self, end_of_data)

    def format(self, headers):
        """Label the cartridge afresh (everything on it is gone); its end of data."""
        writer = ScsiVolumeWriter(self, 0)
        try:
            body = f"{self.label}\n".encode()
            writer.add(tape.LABEL_NAME, io.BytesIO(body), len(body), "MD5",
                       {"label": self.label, **headers})
            end = writer.end_of_data
            writer.close()
        except BaseException:
            writer.abandon()
            raise
        return end

    def cut(self, end_of_data):
        """End the volume at `end_of_data` (the members past it are gone)."""
        ScsiVolumeWriter(self, end_of_data).close()

    def read(self, data_offset, length, checksum_type, sink=None, drop_cache=False):
        digest = checksums.hasher(checksum_type)
        with self.session() as m:
            for piece in Reader(m, self.record).chunks(data_offset, length):
                digest.update(piece)
                if sink:
                    sink(piece)
        return digest.hexdigest()

    def read_many(self, members, drop_cache=False):
        """Checksums of [(data_offset, length, checksum_type)] in one pass in offset order."""
        out = [None] * len(members)
        if not members:
            return out
        with self.session() as m:
            reader = Reader(m, self.record)
            for i in sorted(range(len(members)), key=lambda i: members[i][0]):
                offset, length, kind = members[i]
                digest = checksums.hasher(kind)
                for piece in reader.chunks(offset, length):
                    digest.update(piece)
                out[i] = digest.hexdigest()
        return out

    def verify(self, data_offset, length, checksum_type, checksum):
        return checksums.same(checksum_type, self.read(data_offset, length, checksum_type),
                              checksum)

    def scan(self):
        """Every member on the cartridge (the label first), read from its start."""
        with self.session() as m:
            stream = Stream(Reader(m, self.record))
            members = tape.scan_stream(io.BufferedReader(stream, self.record))
            while stream.readinto(bytearray(self.record)):
                pass
            self._end = stream.length
        return [mb for mb in members if mb.data_offset + mb.size <= self._end]

    def size(self):
        """How many bytes the cartridge's stream holds (to its filemark)."""
        if self._end is None:
            self.scan()
        return self._end

    def listing(self):
        for mb in self.scan():
            if not mb.is_label:
                yield Listed(mb.name, mb.size, extra={"position": mb.position,
                                                      "data_offset": mb.data_offset,
                                                      "headers": mb.headers})

    def delete(self, data_offset=None):
        """Nothing to do on the medium: a released member's room is reclaimed by a repack."""

    def health(self):
        try:
            with scsi_errors(self.label):
                element, _ = self.library.where_is(self.label)
        except (MediumError, DriveError) as exc:
            return Health(False, str(exc))
        if element is None:
            return Health(False, f"cartridge {self.label} is not in the library")
        return Health(True)


class ScsiVolumeWriter:
    """Appends members at a cartridge's end of data, a record at a time (the interface of
    tape.VolumeWriter). A member's bytes are read from its file straight into the record
    (and hashed there) while a thread of its own sends the records before to the drive
    (WRITE_DEPTH deep); each add waits for its records before it returns, so an end of medium
    or a failure is the member's. The cartridge stays mounted and locked until close or
    abandon."""

    def __init__(self, volume, end_of_data):
        self.volume, self.size, self.full = volume, volume.record, False
        self._stack = ExitStack()
        self._eom, self._drive = False, None
        with scsi_errors(volume.label, volume.library):
            try:
                self.m = self._stack.enter_context(volume.session(check=end_of_data > 0))
                self._resume(end_of_data)
            except BaseException:
                self._stack.close()
                raise

    def _resume(self, end):
        """Write from `end` on: the head of its record is read back and written again."""
        k, keep = divmod(end, self.size)
        prefix = b""
        try:
            if keep:
                prefix = Reader(self.m, self.size).record(k)[:keep]
            elif k:
                seek(self.m, k)
        except (scsi.EndOfData, scsi.FilemarkMet) as exc:
            raise tape.VolumeTruncated(f"cartridge {self.volume.label} ends before its end "
                                       f"of data {end}") from exc
        if len(prefix) < keep:
            raise tape.VolumeTruncated(f"cartridge {self.volume.label} ends at byte "
                                       f"{k * self.size + len(prefix)}, before its end of data "
                                       f"{end}")
        seek(self.m, k)
        self._base, self._buffer, self._fill = k * self.size, bytearray(self.size), keep
        self._buffer[:keep] = prefix

    @property
    def end_of_data(self):
        return self._base + self._fill

    def _record(self, data):
        """Hand a record to the drive's thread; the caller does not touch `data` again."""
        self.m.cache.clear()
        if self._drive is None:
            self._drive = Stage(self._send, "tape-write", WRITE_DEPTH)
        with self._position_lost():
            self._drive.put(data)
        self.m.position += 1
        self._base += len(data)

    def _send(self, record):
        try:
            self.m.drive.write(record)
        except scsi.EndOfMedium:
            self._eom = True          # the record is written: the early warning

    def _drain(self):
        """Wait until the drive has taken every record handed to it."""
        if self._drive is not None:
            with self._position_lost():
                self._drive.drain()

    @contextmanager
    def _position_lost(self):
        """A failed write leaves the head where no one knows (the next seek rewinds)."""
        try:
            yield
        except BaseException:
            self.m.position = None
            raise

    def _full(self):
        record, self._buffer, self._fill = self._buffer, bytearray(self.size), 0
        self._record(record)

    def _emit(self, data):
        """Copy `data` (a header, padding) into the records."""
        view = memoryview(data)
        while len(view):
            n = min(len(view), self.size - self._fill)
            self._buffer[self._fill:self._fill + n] = view[:n]
            self._fill += n
            view = view[n:]
            if self._fill == self.size:
                self._full()

    def _copy(self, name, source, length, digest, progress):
        """`length` bytes of `source` read into the records where they go, hashed there."""
        remaining = length
        while remaining:
            want = min(self.size - self._fill, remaining)
            got = _read_into(source, memoryview(self._buffer)[self._fill:self._fill + want])
            if not got:
                raise tape.VolumeError(f"source of {name} ended {remaining} bytes early")
            if digest:
                digest.update(memoryview(self._buffer)[self._fill:self._fill + got])
            self._fill += got
            remaining -= got
            if progress:
                progress(got)
            if self._fill == self.size:
                self._full()

    def add(self, name, source, length, checksum_type, headers, progress=None):
        position = self.end_of_data
        with scsi_errors(self.volume.label, self.volume.library):
            if self.full:
                raise tape.VolumeFull(f"cartridge {self.volume.label} is at its end of medium")
            head = tape.member_header(name, length, headers)
            self._emit(head)
            digest = checksums.hasher(checksum_type) if checksum_type else None
            self._copy(name, source, length, digest, progress)
            self._emit(b"\0" * ((-length) % tape.TAR_BLOCK))
            self._drain()
            if self._eom:
                self._take_back(position)
                raise tape.VolumeFull(f"cartridge {self.volume.label} reached its end of "
                                      f"medium while {name} was written")
        return tape.Written(position, position + len(head), length,
                            digest.hexdigest() if digest else "", self.end_of_data)

    def _take_back(self, position):
        """Forget the member that met the end of medium: the stream ends at `position`."""
        self.full, self._eom = True, False
        if position >= self._base:
            self._fill = position - self._base
        else:
            self._resume(position)

    def sync(self):
        """Every record handed to the drive is on tape; the last one is written by close()."""
        with scsi_errors(self.volume.label, self.volume.library):
            self._drain()

    def close(self, sync=True):
        if self._stack is None:
            return
        end = self.end_of_data
        try:
            with scsi_errors(self.volume.label, self.volume.library):
                self._emit(tape.END_OF_ARCHIVE)
                if self._fill:
                    self._record(self._buffer[:self._fill])
                self._drain()
                self.m.drive.write_filemarks(1)
                self.m.position += 1
            self._base, self._fill = end, 0
        finally:
            self._release()

    def abandon(self):
        self._release()

    def _release(self):
        if self._drive is not None:
            self._drive.abandon()     # before the mount goes: the thread uses its drive
            self._drive = None
        if self._stack is not None:
            self._stack.close()
            self._stack = None


def _read_into(source, view):
    """Bytes of `source` read into `view` (readinto, or read and copied); how many."""
    readinto = getattr(source, "readinto", None)
    if readinto is not None:
        return readinto(view) or 0
    chunk = source.read(len(view))
    view[:len(chunk)] = chunk
    return len(chunk)
