#!/usr/bin/env python3
"""granary-get: download the files of a Granary order, resuming, retrying and checking every
checksum, and say in a manifest what came and what did not.

    granary-get ORDER_ID --server https://granary.example.org --token TOKEN
    granary-get https://granary.example.org/api/v1/orders/12/links/ --token TOKEN
    python3 granary-order-12.py          # an order's script: its links are inside

The token may also come from GRANARY_TOKEN, the server from GRANARY_URL. Files go into
DIR/<granule>/<name> (DIR: --output, default the current folder), each written as NAME.part
and renamed once its size and checksum are right. Run it again to resume: files already
complete and verified are skipped, partial ones continue where they stopped (HTTP Range, with
If-Range so that a file changed on the server is fetched whole, never spliced).

Network errors, 5xx and truncated bodies are retried with exponential backoff and jitter; a 429
or 503 with Retry-After (a server that is busy, a file still being staged from tape) is waited
for as the server asks, up to --max-wait. A checksum that does not match after a resume means
the partial copy was bad: the file is fetched whole again; one that does not match twice alike
on whole downloads is the server's copy, and is reported.

DIR/granary-manifest.json and granary-manifest.txt list every file with its outcome (ok,
skipped, failed) and, for failures, the reason. Exit status: 0 when every file is complete and
verified, 1 when any failed, 2 when the order could not be read at all.

Only Python's standard library (3.8 or later) is used, so it runs wherever Python does.
"""
import argparse
import base64
import datetime
import email.utils
import hashlib
import http.client
import json
import os
import random
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib

VERSION = "1"
ORDER = None  # an order's script carries its listing here (base64 of the links JSON)
CHUNK = 1 << 20
TIMEOUT_S = 60
MANIFEST = "granary-manifest"


# --- checksums ---------------------------------------------------------------------------

class ChecksumUnknown(ValueError):
    """A checksum type (or multihash code) this script cannot compute."""


class _PosixCksum:
    """POSIX cksum: CRC-32 (polynomial 0x04C11DB7, MSB first, register from 0) of the data and
    then of its length in the fewest bytes, least significant first; the result inverted.
    zlib's crc32 is the same CRC bit-reflected, so bytes go in reflected and the register is
    reflected back at the end."""

    FLIP = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))

    def __init__(self):
        self.value, self.length = 0xFFFFFFFF, 0   # zlib inverts it into a zero register

    def update(self, data):
        self.value = zlib.crc32(bytes(data).translate(self.FLIP), self.value)
        self.length += len(data)

    def hexdigest(self):
        length, tail = self.length, bytearray()
        while length:
            tail.append(length & 0xFF)
            length >>= 8
        register = zlib.crc32(bytes(tail).translate(self.FLIP), self.value) ^ 0xFFFFFFFF
        msb_first = int(f"{register:032b}"[::-1], 2)
        return str(msb_first ^ 0xFFFFFFFF)


class _Adler32:
    def __init__(self):
        self.value = 1

    def update(self, data):
        self.value = zlib.adler32(data, self.value)

    def hexdigest(self):
        return f"{self.value:08x}"


# multihash codes (https://github.com/multiformats/multicodec) this script can compute
_MULTIHASH = {0x11: "sha1", 0x12: "sha256", 0x13: "sha512", 0x14: "sha3_512",
              0x15: "sha3_384", 0x16: "sha3_256", 0x17: "sha3_224", 0xd5: "md5"}
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _varint(data, at):
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ChecksumUnknown("malformed multihash")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def _multihash_bytes(text):
    """A multihash as hex, or base58btc (with or without the multibase 'z')."""
    text = text.strip()
    if re.fullmatch(r"(?:[0-9a-fA-F]{2})+", text):
        return bytes.fromhex(text)
    if text.startswith("z"):
        text = text[1:]
    number = 0
    for char in text:
        if char not in _BASE58:
            raise ChecksumUnknown("multihash is neither hex nor base58btc")
        number = number * 58 + _BASE58.index(char)
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return b"\0" * (len(text) - len(text.lstrip("1"))) + body


def multihash_parts(text):
    """(hashlib constructor, expected digest bytes) of a multihash."""
    data = _multihash_bytes(text)
    code, at = _varint(data, 0)
    length, at = _varint(data, at)
    digest = data[at:]
    if len(digest) != length:
        raise ChecksumUnknown("multihash length does not match its digest")
    if 0xb201 <= code <= 0xb240 or 0xb241 <= code <= 0xb260:
        size = code - 0xb200 if code <= 0xb240 else code - 0xb240
        maker = hashlib.blake2b if code <= 0xb240 else hashlib.blake2s
        return (lambda: maker(digest_size=size)), digest
    if code not in _MULTIHASH:
        raise ChecksumUnknown(f"multihash code 0x{code:x} is not one this script knows")
    name = _MULTIHASH[code]
    return (lambda: hashlib.new(name)), digest


def checksum_kind(kind):
    return re.sub(r"[-_ ]", "", str(kind or "")).upper()


class Checksum:
    """The catalog's checksum of a file: `matches(path)` hashes the file and compares."""

    def __init__(self, kind, expected):
        self.kind, self.expected = checksum_kind(kind), str(expected or "").strip()
        if self.kind.startswith("MULTIHASH"):
            self._new, self._want = multihash_parts(self.expected)
        elif self.kind in ("MD5", "SHA1", "SHA256", "SHA512"):
            self._new, self._want = (lambda: hashlib.new(self.kind.lower())), None
        elif self.kind == "CKSUM":
            self._new, self._want = _PosixCksum, None
        elif self.kind == "ADLER32":
            self._new, self._want = _Adler32, None
        else:
            raise ChecksumUnknown(f"checksum type {kind!r} is not one this script knows")

    def of(self, path):
        digest = self._new()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(CHUNK), b""):
                digest.update(block)
        return digest.hexdigest() if self._want is None else digest.digest().hex()

    def same(self, got):
        if self._want is not None:
            return got == self._want.hex()
        if self.kind == "CKSUM":
            return got.lstrip("0") == self.expected.lstrip("0")
        return got.lower() == self.expected.lower()


# --- HTTP --------------------------------------------------------------------------------

NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, socket.timeout,
                  ConnectionError, TimeoutError, OSError)


class Answer:
    """An HTTP answer: status, headers, and for errors the server's `detail`."""

    def __init__(self, status, headers, response=None, detail=""):
        self.status, self.headers, self.response, self.detail = status, headers, response, detail


def request(url, headers):
    """Answer, or raises one of NETWORK_ERRORS. Error answers are read and closed here."""
    req = urllib.request.Request(url, headers=dict(headers, **{
        "User-Agent": "granary-get/" + VERSION}))
    try:
        response = urllib.request.urlopen(req, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as err:
        with err:
            body = err.read(65536)
        try:
            detail = json.loads(body.decode("utf-8")).get("detail", "")
        except (ValueError, AttributeError, UnicodeDecodeError):
            detail = body.decode("utf-8", "replace")[:300]
        return Answer(err.code, err.headers, detail=str(detail))
    return Answer(response.status, response.headers, response=response)


def retry_after(headers):
    """Seconds the server asks us to wait (delta-seconds or an HTTP date), or None."""
    value = (headers.get("Retry-After") or "").strip()
    if value.isdigit():
        return int(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0, int((when - _now_utc()).total_seconds()) + 1)


def _now_utc():
    return datetime.datetime.now(datetime.timezone.utc)  # noqa: UP017 - runs on Python 3.8+


def backoff(errors, base=1.0, cap=300.0):
    """Exponential backoff with jitter: half the step fixed, half random, so many clients
    failing together do not come back together."""
    step = min(cap, base * 2 ** max(0, errors - 1))
    return step / 2 + random.uniform(0, step / 2)


# --- the order ---------------------------------------------------------------------------

class Failure(Exception):
    """The order itself could not be read (exit status 2)."""


def read_listing(url, token, log, retries):
    """The links JSON of an order, by its links URL and a token; retried like a download."""
    errors = 0
    while True:
        try:
            answer = request(url, {"Authorization": "Token " + token,
                                   "Accept": "application/json"})
            if answer.response is not None:
                with answer.response:
                    return json.loads(answer.response.read().decode("utf-8"))
            problem = f"HTTP {answer.status}: {answer.detail}"
            wait = retry_after(answer.headers)
            if answer.status != 429 and answer.status < 500:
                raise Failure(f"could not read the order at {url}: {problem}")
        except NETWORK_ERRORS as exc:
            problem, wait = f"network error: {exc}", None
        errors += 1
        if errors > retries:
            raise Failure(f"could not read the order at {url}: {problem}")
        wait = wait if wait is not None else backoff(errors)
        log(f"reading the order: {problem}; again in {wait:.0f} s")
        time.sleep(wait)


def _safe(part, fallback):
    """A file or folder name that stays inside the output folder on any system."""
    part = re.sub(r'[\x00-\x1f\x7f<>:"/\\|?*]', "_", str(part)).strip().rstrip(".")
    return part if part and part not in (".", "..") else fallback


def plan(listing):
    """Every file of the order: its row, its state (ready, waiting, failed), where it goes."""
    rows, taken = [], set()
    for state, key in (("ready", "links"), ("waiting", "waiting"), ("failed", "failed")):
        for row in listing.get(key) or []:
            entry = dict(row, state=state)
            folder = _safe(row.get("granule"), "granule")
            name = _safe(row.get("name"), "file-{}".format(row.get("file_id")))
            path = os.path.join(folder, name)
            if path in taken:
                path = os.path.join(folder, "{}-{}".format(row.get("file_id"), name))
            taken.add(path)
            entry["path"] = path
            rows.append(entry)
    return rows


# --- one file ----------------------------------------------------------------------------

class Task:
    """A file being fetched: its listing row, how it went so far and when to try again."""

    def __init__(self, entry, out):
        self.entry, self.due, self.errors, self.notes = entry, 0.0, 0, []
        self.final = os.path.join(out, entry["path"])
        self.part, self.meta = self.final + ".part", self.final + ".part.json"
        self.bad_digests, self.resumed_from, self.received = set(), None, 0

    def result(self, outcome, reason=""):
        e = self.entry
        row = {"granule": e.get("granule"), "name": e.get("name"), "file_id": e.get("file_id"),
               "path": e["path"], "size": e.get("size"), "checksum_type": e.get("checksum_type"),
               "checksum": e.get("checksum"), "outcome": outcome, "reason": reason,
               "attempts": self.errors, "resumed_from": self.resumed_from,
               "bytes_received": self.received, "notes": self.notes}
        if outcome in ("ok", "skipped"):
            st = os.stat(self.final)
            row["stat"] = [st.st_size, st.st_mtime_ns]
        return row


class Later(Exception):
    """Try this file again in `wait` s; `error` counts it against --retries, else it is a
    wait the server asked for (bounded by --max-wait)."""

    def __init__(self, wait, note, error=True):
        super().__init__(note)
        self.wait, self.note, self.error = wait, note, error


class Done(Exception):
    def __init__(self, outcome, reason=""):
        super().__init__(reason)
        self.outcome, self.reason = outcome, reason


class Fetcher:
    def __init__(self, opts, log, previous):
        self.opts, self.log, self.previous = opts, log, previous

    def settle_existing(self, task, checksum):
        """A final file already there: skipped if complete and verified (the last manifest's
        word for it while size and mtime are unchanged, else hashed now)."""
        e = task.entry
        if not os.path.exists(task.final):
            return None
        st = os.stat(task.final)
        before = self.previous.get(e["path"])
        if (before and before.get("outcome") in ("ok", "skipped")
                and before.get("checksum") == e.get("checksum")
                and before.get("stat") == [st.st_size, st.st_mtime_ns]):
            return task.result("skipped", "already complete (verified on an earlier run)")
        if st.st_size == e.get("size") and checksum.same(checksum.of(task.final)):
            return task.result("skipped", "already complete, checksum verified")
        task.notes.append("a different file was under its name: fetched again")
        return None

    def attempt(self, task, checksum):
        """One try: raises Done or Later."""
        e = task.entry
        start, validator = self._partial(task)
        if start and start == e["size"]:
            self._verify(task, checksum, start, resumed=True)
        headers = {}
        if start:
            headers = {"Range": f"bytes={start}-", "If-Range": validator}
        try:
            answer = request(e["url"], headers)
        except NETWORK_ERRORS as exc:
            raise Later(backoff(task.errors + 1), f"network error: {exc}") from None
        if answer.response is None:
            self._refused(task, checksum, answer, start)
        with answer.response as response:
            if answer.status == 206:
                span = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)",
                                    response.headers.get("Content-Range", "").strip())
                if not span or int(span.group(1)) != start or int(span.group(3)) != e["size"]:
                    self._discard(task)
                    raise Later(backoff(task.errors + 1), "the server answered another range "
                                "({!r}): starting again".format(
                                    response.headers.get("Content-Range")))
                task.resumed_from = start
                self.log("{}: resuming at byte {} of {}".format(e["path"], start, e["size"]))
            else:
                if start:
                    task.notes.append("the server sent the whole file instead of resuming at "
                                      f"byte {start} (it changed since, or ignored the range): "
                                      "started again")
                start = 0
            self._write_meta(task, response.headers.get("ETag"))
            got = self._receive(task, response, start)
        if got < e["size"]:
            raise Later(backoff(task.errors + 1),
                        "the connection ended after {} of {} bytes".format(got, e["size"]))
        self._verify(task, checksum, got, resumed=start > 0)

    def _refused(self, task, checksum, answer, start):
        status, detail = answer.status, answer.detail
        problem = "HTTP {}{}".format(status, ": " + detail if detail else "")
        wait = retry_after(answer.headers)
        if status == 416:
            whole = re.fullmatch(r"bytes \*/(\d+)", answer.headers.get("Content-Range", ""))
            if whole and start == int(whole.group(1)):
                self._verify(task, checksum, start, resumed=True)
            self._discard(task)
            raise Later(0, "the partial copy does not fit the file (416): starting again")
        if status in (429, 503) and wait is not None:
            raise Later(wait, problem, error=False)
        if status >= 500 or status in (408, 429):
            raise Later(backoff(task.errors + 1), problem)
        raise Done("failed", problem)

    def _partial(self, task):
        """(bytes to resume from, the ETag they came with), or (0, None) after removing a
        partial copy that cannot be trusted (no validator, another checksum, too long)."""
        if not os.path.exists(task.part):
            return 0, None
        try:
            with open(task.meta) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            meta = {}
        size = os.path.getsize(task.part)
        if (meta.get("checksum") != task.entry.get("checksum") or not meta.get("etag")
                or size > task.entry["size"]):
            self._discard(task)
            return 0, None
        return size, meta["etag"]

    def _write_meta(self, task, etag):
        os.makedirs(os.path.dirname(task.final) or ".", exist_ok=True)
        with open(task.meta, "w") as f:
            json.dump({"etag": etag, "checksum": task.entry.get("checksum"),
                       "url": task.entry.get("url")}, f)

    def _discard(self, task):
        for path in (task.part, task.meta):
            try:
                os.remove(path)
            except FileNotFoundError:
                pass

    def _receive(self, task, response, start):
        """Append the body to the partial file; the bytes it then holds."""
        rate, began, count = self.opts.limit_rate, time.monotonic(), 0
        block = min(CHUNK, max(4096, rate // 8)) if rate else CHUNK
        with open(task.part, "ab" if start else "wb", buffering=0) as out:
            held = start
            try:
                while held < task.entry["size"]:
                    data = response.read(min(block, task.entry["size"] - held))
                    if not data:
                        break
                    out.write(data)
                    held += len(data)
                    count += len(data)
                    task.received += len(data)
                    if rate:
                        ahead = count / rate - (time.monotonic() - began)
                        if ahead > 0:
                            time.sleep(ahead)
            except NETWORK_ERRORS as exc:
                task.notes.append(f"connection lost after {held} bytes ({exc}): resumed")
            os.fsync(out.fileno())
        return held

    def _verify(self, task, checksum, size, resumed=False):
        e = task.entry
        got = checksum.of(task.part)
        if size == e["size"] and checksum.same(got):
            os.replace(task.part, task.final)
            self._discard(task)
            raise Done("ok")
        self._discard(task)
        mismatch = "{} {} (expected {})".format(checksum.kind, got, e.get("checksum"))
        if resumed:
            task.notes.append(f"checksum mismatch after resuming ({mismatch}): the partial "
                              "copy was bad; fetched whole again")
            raise Later(0, "checksum mismatch after resuming")
        if got in task.bad_digests:
            raise Done("failed", f"checksum mismatch: {mismatch}, twice alike: the server's "
                                 "copy is not the catalog's")
        task.bad_digests.add(got)
        task.notes.append(f"checksum mismatch ({mismatch}): fetched again")
        raise Later(backoff(task.errors + 1), "checksum mismatch")


# --- the run -----------------------------------------------------------------------------

def run(rows, opts, log):
    """Fetch every file; the manifest rows."""
    out, results, tasks = opts.output, [], []
    previous = _previous_manifest(out)
    fetcher = Fetcher(opts, log, previous)
    for entry in rows:
        task = Task(entry, out)
        if entry["state"] == "failed":
            results.append(task.result("failed", entry.get("error") or "the order item failed"))
            continue
        try:
            task.checksum = Checksum(entry.get("checksum_type"), entry.get("checksum"))
        except ChecksumUnknown as exc:
            results.append(task.result("failed", f"cannot verify: {exc}"))
            continue
        done = fetcher.settle_existing(task, task.checksum)
        if done:
            results.append(done)
        elif not entry.get("url"):
            results.append(task.result("failed", "no download link (the order is {})".format(
                entry.get("order_state", "closed"))))
        else:
            tasks.append(task)
    deadline = time.monotonic() + opts.max_wait
    _progress(results, rows, log)
    while tasks:
        task = min(tasks, key=lambda t: t.due)
        pause = task.due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        try:
            fetcher.attempt(task, task.checksum)
            raise Later(0, "no answer")           # attempt always ends in Done or Later
        except Done as done:
            tasks.remove(task)
            results.append(task.result(done.outcome, done.reason))
            log("{}: {}{}".format(task.entry["path"], done.outcome,
                                  ": " + done.reason if done.reason else ""))
            _progress(results, rows, log)
        except Later as later:
            if later.error:
                task.errors += 1
            if later.error and task.errors > opts.retries:
                tasks.remove(task)
                reason = f"gave up after {task.errors} tries: {later.note}"
                results.append(task.result("failed", reason))
                log("{}: failed: {}".format(task.entry["path"], later.note))
                _progress(results, rows, log)
                continue
            wait = later.wait * (1 + random.uniform(0, 0.1)) if not later.error else later.wait
            if time.monotonic() + wait > deadline:
                tasks.remove(task)
                results.append(task.result("failed", "still not available after waiting "
                                           f"--max-wait {opts.max_wait} s: {later.note}"))
                continue
            task.due = time.monotonic() + wait
            log("{}: {}; trying again in {:.1f} s{}".format(
                task.entry["path"], later.note, wait,
                "" if later.error else f" (Retry-After: {later.wait} s, as the server asks)"))
    order = {r["path"]: i for i, r in enumerate(rows)}
    return sorted(results, key=lambda r: order[r["path"]])


def _progress(results, rows, log):
    """Percent of the order complete and verified (by bytes; by files when it has none);
    never 100 while a file is missing."""
    good = [r for r in results if r["outcome"] in ("ok", "skipped")]
    total = sum(r.get("size") or 0 for r in rows)
    done = sum(r["size"] or 0 for r in good)
    if not total:
        total, done = len(rows), len(good)
    percent = 100 * done // total if total else 100
    if len(good) < len(rows):
        percent = min(percent, 99)
    failed = sum(1 for r in results if r["outcome"] == "failed")
    log("[{:3d} %] {} of {} files complete and verified{}".format(
        percent, len(good), len(rows), f", {failed} failed" if failed else ""))
    return percent


def _previous_manifest(out):
    try:
        with open(os.path.join(out, MANIFEST + ".json")) as f:
            return {r["path"]: r for r in json.load(f)["files"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def write_manifest(out, listing, results, percent):
    counts = {k: sum(1 for r in results if r["outcome"] == k)
              for k in ("ok", "skipped", "failed")}
    document = {"order": listing.get("order"), "order_state": listing.get("state"),
                "expires_at": listing.get("expires_at"),
                "finished_at": _now_utc().isoformat(),
                "complete_percent": percent, "counts": counts, "files": results}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, MANIFEST + ".json.tmp"), "w") as f:
        json.dump(document, f, indent=2)
    os.replace(os.path.join(out, MANIFEST + ".json.tmp"), os.path.join(out, MANIFEST + ".json"))
    lines = ["Granary order {}: {} of {} files complete and verified ({} %), {} failed".format(
        listing.get("order"), counts["ok"] + counts["skipped"], len(results), percent,
        counts["failed"]), ""]
    for r in results:
        word = {"ok": "OK", "skipped": "SKIPPED", "failed": "FAILED"}[r["outcome"]]
        line = "{:<8} {}  ({} bytes, {} {})".format(word, r["path"], r["size"],
                                                   r["checksum_type"], r["checksum"])
        if r["reason"]:
            line += "\n         reason: " + r["reason"]
        if r["resumed_from"]:
            line += "\n         resumed at byte {}".format(r["resumed_from"])
        for note in r["notes"]:
            line += "\n         note: " + note
        lines.append(line)
    with open(os.path.join(out, MANIFEST + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def _rate(text):
    match = re.fullmatch(r"(\d+)([kKmM]?)", text.strip())
    if not match:
        raise argparse.ArgumentTypeError("a rate is bytes per second, e.g. 500k or 2M")
    return int(match.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20}[match.group(2).lower()]


def arguments(argv):
    parser = argparse.ArgumentParser(
        prog="granary-get", description="Download a Granary order: resumes, retries, checks "
        "every checksum and writes a manifest of what came and what failed.")
    parser.add_argument("order", nargs="?", help="an order id (with --server) or the order's "
                        "links URL; an order's own script needs neither")
    parser.add_argument("--server", default=os.environ.get("GRANARY_URL"),
                        help="Granary's address (default $GRANARY_URL)")
    parser.add_argument("--token", default=os.environ.get("GRANARY_TOKEN"),
                        help="your API token (default $GRANARY_TOKEN)")
    parser.add_argument("-o", "--output", default=".", help="folder to download into")
    parser.add_argument("--retries", type=int, default=8,
                        help="tries per file after network errors, 5xx and bad checksums")
    parser.add_argument("--max-wait", type=float, default=2 * 86400,
                        help="seconds to keep waiting for files still being staged, or a "
                             "server asking to come back later (default two days)")
    parser.add_argument("--limit-rate", type=_rate, default=0,
                        help="bytes per second at most, e.g. 500k or 2M (default: no limit)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    parser.add_argument("--version", action="version", version="granary-get " + VERSION)
    return parser.parse_args(argv)


def listing_of(opts, log):
    """The order's listing: embedded in an order's script, or read with a token."""
    embedded = json.loads(base64.b64decode(ORDER).decode("utf-8")) if ORDER else None
    target = opts.order
    if target is None and embedded is None:
        raise Failure("name an order: its id (with --server) or its links URL")
    if target is None and not opts.token:
        return embedded
    if target is None:
        target = embedded["links_url"]
    if re.fullmatch(r"\d+", target):
        server = opts.server or (embedded or {}).get("site")
        if not server:
            raise Failure("an order id needs --server (or GRANARY_URL)")
        target = "{}/api/v1/orders/{}/links/".format(server.rstrip("/"), target)
    if urllib.parse.urlsplit(target).scheme not in ("http", "https"):
        raise Failure(f"{target!r} is neither an order id nor an http(s) URL")
    if not opts.token:
        raise Failure("reading an order needs your API token: --token or GRANARY_TOKEN "
                      "(POST /api/v1/auth/token/ makes one)")
    return read_listing(target, opts.token, log, opts.retries)


def main(argv=None):
    opts = arguments(sys.argv[1:] if argv is None else argv)

    def log(message):
        if not opts.quiet:
            print(message, file=sys.stderr, flush=True)

    try:
        listing = listing_of(opts, log)
    except Failure as exc:
        print(f"granary-get: {exc}", file=sys.stderr)
        return 2
    rows = plan(listing)
    for row in rows:
        row["order_state"] = listing.get("state")
    results = run(rows, opts, log)
    percent = _progress(results, rows, lambda _: None)
    write_manifest(opts.output, listing, results, percent)
    failed = [r for r in results if r["outcome"] == "failed"]
    print("granary-get: order {}: {} of {} files complete and verified ({} %){}; manifest: {}"
          .format(listing.get("order"), len(results) - len(failed), len(results), percent,
                  f", {len(failed)} FAILED" if failed else "",
                  os.path.join(opts.output, MANIFEST + ".txt")), file=sys.stderr)
    for r in failed:
        print("  FAILED {}: {}".format(r["path"], r["reason"]), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
