"""The chaos run's object store, and what the run does to it.

The outer process picks the S3 server's port and keys (the run's own, never a shared server)
and gives them to every process as GRANARY_S3_*. The run starts the server itself (rclone serve
s3 over the folder s3/ of the run folder, see tests/s3_server.py) a while after the ingest
began, and stops it by its pid at the end (pids/s3 lets the outer process kill it when the run
itself dies). Two buckets are copy targets: copy 1 of one collection goes to chaos-objects and
of another to chaos-late, whose bucket does not exist until the run creates it; copy 2 of both
goes to tape, and a third collection stays on tape only.

The faults: the server down for the run's first seconds or minutes; killed -9 and started again
mid-ingest; restarted with other keys for a while, then with Granary's again; the missing
bucket; an object deleted and another's bytes replaced behind Granary's back, then ordered (the
recall must serve the tape copy's bytes, mark the object bad and have it written again); and
the big object (a GB or more) written in parts, recalled from its bucket and downloaded.

A store fault lasts until the archive has recorded its reason on a request an operator can read,
at most REASON_WAIT_S: a fault whose reason never showed, or whose own check failed, fails the
run. The reasons are caught by a trigger the run adds to its own database (REASON_LOG): every
reason set on object work, or naming an object, is logged as it is written, so one that lasts a
few milliseconds (a recall whose object failed its check, served from tape at once) is seen too.
"""
import os
import secrets
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from bench.s3server import S3Server
from bench.tgt_library import flip_byte

from .provider import BIG
from .reasons import REASON_WAIT_S
from .services import free_port
from .watch import with_db

OBJECTS, LATE = "chaos-objects", "chaos-late"   # Bucket rows (copy targets) -> bucket names
BUCKETS = {OBJECTS: "granary-chaos-objects", LATE: "granary-chaos-late"}
# What an operator reads on the affected requests while each fault lasts.
UNREACHABLE = "is unreachable"
REFUSED = "refused Granary's credentials"
NO_BUCKET = "does not exist"
FAILED_CHECK = "failed its check"
STORE_FAULTS = ("kill", "keys", "bucket")   # done one a slot once the server is up
ALL_FAULTS = ("unreachable", *STORE_FAULTS, "damage", "big")


def environment():
    """GRANARY_S3_* of a run: a free port, and keys of its own."""
    return {"GRANARY_S3_ENDPOINT": f"http://127.0.0.1:{free_port()}",
            "GRANARY_S3_ACCESS_KEY": "granary-chaos",
            "GRANARY_S3_SECRET_KEY": f"chaos-{secrets.token_hex(12)}",
            "GRANARY_S3_REGION": "us-east-1"}


class Server:
    """The run's S3 server: rclone serve s3 over run_dir/s3 on the endpoint's port; each bucket
    is a folder there and each object a file, so bytes can be changed behind its back."""

    def __init__(self, run_dir, config):
        self.run_dir = Path(run_dir)
        self.root = self.run_dir / "s3"
        self.endpoint = config["endpoint_url"]
        self.access_key, self.secret_key = config["access_key"], config["secret_key"]
        self.server = S3Server(root=self.root, port=int(self.endpoint.rsplit(":", 1)[1]),
                               access_key=self.access_key, secret_key=self.secret_key)
        self.server.log_path = self.run_dir / "logs" / "s3.log"
        self.pid_file = self.run_dir / "pids" / "s3"

    @property
    def up(self):
        return self.server.pid is not None

    def start(self, access_key=None, secret_key=None):
        """Start on the same port and folder, with Granary's keys unless others are given."""
        self.server.access_key = access_key or self.access_key
        self.server.secret_key = secret_key or self.secret_key
        self.server.start(timeout=30)
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        self.pid_file.write_text(str(self.server.pid))

    def kill9(self):
        self.server.kill9()

    def stop(self):
        """SIGTERM to its pid (SIGKILL after 10 s)."""
        self.server.stop()

    def client(self):
        return self.server.client(access_key=self.access_key, secret_key=self.secret_key)

    def path(self, bucket, key):
        """The file that holds an object."""
        return self.root / bucket / key


@dataclass
class Record:
    """One fault as the run did it and what the archive showed while it lasted."""

    fault: str
    phrase: str | None
    start: float
    end: float | None = None
    reason: str = ""
    seen_after_s: float | None = None
    files: set = field(default_factory=set)   # files the reason was recorded for
    detail: str = ""
    ok: bool | None = None   # the fault's own check, beyond its reason (damage, big object)

    def saw(self, change):
        if change is not None and not self.reason:
            self.reason = change.error
            self.seen_after_s = round(change.at - self.start, 1)


class ObjectFaults:
    """The S3 faults of a run, in the order the run's slots bring them."""

    def __init__(self, run, server, reasons, which, late_s):
        self.run, self.server, self.reasons = run, server, reasons
        self.which, self.late_s = set(which), late_s
        self.records = []
        self.pending = [f for f in STORE_FAULTS if f in self.which]
        run.rng.shuffle(self.pending)
        self.next_slot = 0
        self.started = self.up_thread = None
        self.stopped = threading.Event()

    @property
    def log(self):
        return self.run.faults.log

    def _record(self, fault, phrase, start=None):
        record = Record(fault, phrase, start or time.time())
        self.records.append(record)
        return record

    def _finish(self, record):
        """The fault is over: the requests its reason was recorded on while it lasted (and
        in the few seconds movers already under way took to meet its end)."""
        record.end = time.time()
        found = self.reasons.find(record.phrase, record.start, record.end + 5)
        record.saw(found[0] if found else None)
        record.files |= {c.file_id for c in found}

    # --- the run's first minutes: the server not up yet, one bucket missing ---------------

    def begin(self):
        """At the start of the ingest: the objects' bucket is made (a folder in the server's
        root) but the server stays down for late_s, then a thread of its own starts it (the
        loop may be waiting for the big object, which needs it); the late bucket does not
        exist."""
        self.started = time.time()
        (self.server.root / BUCKETS[OBJECTS]).mkdir(parents=True, exist_ok=True)
        if "bucket" not in self.which:
            (self.server.root / BUCKETS[LATE]).mkdir(parents=True, exist_ok=True)
        else:
            self.bucket_record = self._record(f"bucket {BUCKETS[LATE]} missing", NO_BUCKET)
        if "unreachable" in self.which and self.late_s > 0:
            self.down_record = self._record("S3 unreachable at start", UNREACHABLE)
            self.up_thread = threading.Thread(target=self._start_late, daemon=True,
                                              name="chaos-s3-late")
            self.up_thread.start()
        else:
            self.server.start()
            self.log("S3 server started")

    def _start_late(self):
        record = self.down_record
        if self.stopped.wait(max(0.0, record.start + self.late_s - time.time())):
            return
        try:
            record.saw(self.reasons.wait_for(UNREACHABLE, record.start))
            self.server.start()
        except Exception as exc:  # noqa: BLE001 - the record stays unfinished: the run fails
            return self.log(f"S3 server not started: {exc!r}")
        self._finish(record)
        self.log(f"S3 server started {record.end - record.start:.0f} s into the run "
                 f"(unreachable until then; reason seen after {record.seen_after_s} s)",
                 disruption=True)

    def due(self, slot):
        """The store fault of this slot: one every other slot once the server is up."""
        if not self.server.up or self.up_thread and self.up_thread.is_alive():
            self.next_slot = slot + 1
            return []
        if self.pending and slot >= self.next_slot:
            self.next_slot = slot + 2
            return [f"s3_{self.pending.pop(0)}"]
        return []

    def catch_up(self):
        """What the slots did not bring (a short run): done now, in order, once it is up."""
        if self.up_thread:
            self.up_thread.join()
        out, self.pending = [f"s3_{f}" for f in self.pending], []
        return out

    def stop(self):
        self.stopped.set()
        if self.up_thread:
            self.up_thread.join()

    # --- store faults mid-ingest ------------------------------------------------------------

    def _while(self, record, during, min_s):
        """Keep a fault (already on) while `during` runs and until its reason shows, at least
        min_s; returns the thread `during` runs in."""
        thread = threading.Thread(target=during, daemon=True) if during else None
        if thread:
            thread.start()
        record.saw(self.reasons.wait_for(record.phrase, record.start))
        time.sleep(max(0.0, record.start + min_s - time.time()))
        return thread

    def s3_kill(self, during=None):
        record = self._record("S3 killed -9, restarted", UNREACHABLE)
        self.server.kill9()
        thread = self._while(record, during, 3)
        self.server.start()
        if thread:
            thread.join()
        self._finish(record)
        self.log(f"S3 server killed -9, restarted ({record.end - record.start:.1f} s down; "
                 f"reason seen after {record.seen_after_s} s)", disruption=True)

    def s3_keys(self, during=None):
        record = self._record("S3 refuses Granary's keys", REFUSED)
        self.server.stop()
        self.server.start(access_key="chaos-intruder", secret_key=secrets.token_hex(16))
        thread = self._while(record, during, 5)
        self.server.stop()
        self.server.start()
        if thread:
            thread.join()
        self._finish(record)
        self.log(f"S3 server ran with other keys for {record.end - record.start:.1f} s, then "
                 f"Granary's again (reason seen after {record.seen_after_s} s)", disruption=True)

    def s3_bucket(self, during=None):
        record = self.bucket_record
        thread = self._while(record, during, 0)
        self.server.client().create_bucket(Bucket=BUCKETS[LATE])
        if thread:
            thread.join()
        self._finish(record)
        self.log(f"bucket {BUCKETS[LATE]} created {record.end - record.start:.0f} s into the run "
                 f"(reason seen after {record.seen_after_s} s)", disruption=True)

    # --- damage behind Granary's back -------------------------------------------------------

    def damage(self, ordered=()):
        """Delete one object and replace another's bytes (a byte flipped in a file's bytes as
        the server serves them: same size, other bytes), of granules no order holds (`ordered`:
        their cache copies could not be released); returns their granules' pks, to be ordered.
        A deleted pack (small files share one) loses every member, so only a pack whose every
        member may be lost is deleted; when there is none yet, a second byte is flipped."""
        from backend.archive.models import FileCopy

        faults = self.run.faults
        copies = with_db(lambda: [c for c in FileCopy.objects.filter(
            state=FileCopy.State.VERIFIED, bucket__isnull=False, length__lt=1 << 20,
            file__granule__collection_id__in=faults.collection_ids)
            .exclude(file__granule__granule_id__startswith=BIG)
            .exclude(file__granule_id__in=list(ordered))
            .select_related("bucket", "file").order_by("file_id")[:2000]
            if c.file_id not in faults.damaged])
        by_key = {}
        for c in copies:
            by_key.setdefault(c.key, []).append(c)
        members = with_db(lambda: Counter(FileCopy.objects.filter(
            bucket__isnull=False, key__in=list(by_key)).exclude(
            state=FileCopy.State.RELEASED).values_list("key", flat=True)))
        whole = sorted(k for k, found in by_key.items() if len(found) == members[k])
        gone_key = self.run.rng.choice(whole) if whole else None
        flippable = [c for c in copies if c.length and c.key != gone_key]
        if len(flippable) < (1 if gone_key else 2):
            return self.log("S3 damage: fewer than two verified objects yet") or []
        changed = self.run.rng.sample(flippable, 1 if gone_key else 2)
        start, damaged = time.time(), []
        if gone_key:
            gone = by_key[gone_key]
            bucket = gone[0].bucket.bucket
            record = self._record("object deleted behind Granary's back", FAILED_CHECK, start)
            self.server.client().delete_object(Bucket=bucket, Key=gone_key)
            record.files = {c.file_id for c in gone}
            record.detail = f"{bucket}/{gone_key} ({len(gone)} file(s))"
            damaged += gone
            self.log(f"deleted object {record.detail}: files {sorted(record.files)}")
        else:
            self.log("S3 damage: no pack whose every member may be lost; two objects changed")
        for copy in changed:
            self._flip(copy)
            record = self._record("object bytes replaced behind Granary's back", FAILED_CHECK,
                                  start)
            record.files, record.detail = {copy.file_id}, f"{copy.bucket.bucket}/{copy.key}"
            damaged.append(copy)
            self.log(f"changed a byte of object {record.detail} (file {copy.file_id})")
        faults.damaged |= {c.file_id for c in damaged}
        return [c.file.granule_id for c in damaged]

    def _flip(self, copy):
        """Flip a byte in the middle of the copy's bytes, in the file the server serves."""
        flip_byte(self.server.path(copy.bucket.bucket, copy.key),
                  copy.data_offset + copy.length // 2)

    def await_damage(self, timeout=REASON_WAIT_S):
        """Wait until each damaged object's recall met the damage (its reason recorded): the
        next store fault must not find these recalls still queued (with the store down they
        are rightly read from tape, and the damage is left to reconciliation)."""
        for record in self.records:
            if record.phrase == FAILED_CHECK and not record.reason:
                record.saw(self.reasons.wait_for(FAILED_CHECK, record.start, timeout,
                                                 files=record.files))
                self.log(f"{record.fault}: the recall met it after {record.seen_after_s} s"
                         if record.reason else f"{record.fault}: no recall met it in "
                         f"{timeout:.0f} s")

    def end_damage(self):
        """At the end of the run: the reason each damaged object's recall carried, and whether
        the object was written again (a verified copy in the bucket, newer than the damage)."""
        from backend.archive.models import FileCopy

        for record in self.records:
            if record.phrase != FAILED_CHECK:
                continue
            files = set(record.files)
            record.end = time.time()
            found = self.reasons.find(FAILED_CHECK, record.start, files=files)
            record.saw(found[0] if found else None)
            since = _aware(record.start)
            rewritten = with_db(lambda files=files, since=since: FileCopy.objects.filter(
                file_id__in=files, bucket__isnull=False, state=FileCopy.State.VERIFIED,
                verified_at__gt=since).count())
            bad = with_db(lambda files=files: FileCopy.objects.filter(
                file_id__in=files, bucket__isnull=False).exclude(
                state=FileCopy.State.VERIFIED).count())
            record.ok = rewritten == len(files) and bad >= len(files)
            record.detail += (f"; object copy marked bad {bad}, written again {rewritten}")

    # --- the big object ---------------------------------------------------------------------

    def big_record(self, original, start):
        record = self._record(f"large object {original.size / 2**30:.2f} GiB", None, start)
        record.detail = f"granule {original.granule_id}"
        return record

    def end_big(self, record, order):
        from backend.archive.models import ArchiveRequest, FileCopy

        granule_id = record.detail.split()[-1]
        copies = with_db(lambda: list(FileCopy.objects.filter(
            file__granule__granule_id=granule_id, state=FileCopy.State.VERIFIED)
            .values_list("bucket_id", "etag", "length")))
        recalls = with_db(lambda: list(ArchiveRequest.objects.filter(
            kind="recall", file__granule__granule_id=granule_id).values_list(
            "state", "bucket_id")))
        objects = [(etag, length) for bucket, etag, length in copies if bucket]
        part = settings.GRANARY_S3_PART_BYTES
        parts = -(-objects[0][1] // part) if objects else 0
        from_bucket = any(state == "done" and bucket for state, bucket in recalls)
        downloaded = order is not None and len(order.downloaded) == 1 and not order.corrupt
        record.end = time.time()
        record.ok = bool(objects) and from_bucket and downloaded
        record.detail += (f": object sent in {parts} parts of {part >> 20} MiB, "
                          f"{len(copies) - len(objects)} tape "
                          f"segments; recalled from the bucket {from_bucket}; downloaded and "
                          f"MD5 matched {downloaded}")
        if order is not None and order.error:
            record.detail += f"; order: {order.error}"

    # --- the verdict --------------------------------------------------------------------------

    def rows(self, lost, corrupt_granules):
        """One row per fault: how long, the reason seen, the files it touched, what was lost."""
        from backend.catalog.models import File

        for r in self.records:   # a store fault's requests: those its reason was set on
            if r.phrase and r.phrase != FAILED_CHECK and r.end is not None:
                r.files |= {c.file_id for c in self.reasons.find(r.phrase, r.start, r.end + 5)}
        files = set().union(*(r.files for r in self.records)) if self.records else set()
        granule_of = with_db(lambda: dict(File.objects.filter(pk__in=files).values_list(
            "pk", "granule__granule_id")))
        lost = set(lost)
        out = []
        for r in self.records:
            granules = {granule_of.get(f) for f in r.files} - {None}
            seen = r.phrase is None or bool(r.reason)
            out.append({
                "fault": r.fault, "lasted_s": round((r.end or time.time()) - r.start, 1),
                "expected_reason": r.phrase, "reason": r.reason[:300],
                "seen_after_s": r.seen_after_s, "files": len(r.files),
                "lost": len(granules & lost), "corrupt_served": len(granules & corrupt_granules),
                "detail": r.detail,
                "ok": seen and r.ok is not False and r.end is not None
                and not granules & (lost | corrupt_granules)})
        return out


def _aware(epoch):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC)


def kill_leftover(run_dir):
    """kill -9 the run's S3 server when the run died without stopping it (its pid file names
    it; only an rclone process is touched)."""
    import signal

    pid_file = Path(run_dir) / "pids" / "s3"
    try:
        pid = int(pid_file.read_text())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read()
    except (OSError, ValueError):
        return
    if b"rclone" in argv and b"serve" in argv:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
