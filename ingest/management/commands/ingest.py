"""manage.py ingest DIR --collection SHORT.VER --provider NAME: ingest a local directory."""
import time

from django.core.management.base import CommandError

from backend.accounts.models import Provider
from backend.catalog.models import Collection
from backend.cli import Command as DomainCommand
from ingest.models import IngestGranule
from ingest.services.directory import stage_directory
from ingest.services.periodic import sweep
from ingest.services.pipeline import run_request
from ingest.services.reporting import state_counts


def _bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return f"{n} B"


def _clock(seconds):
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    """One line on stderr: bar, files, bytes, rate and time left."""

    def __init__(self, stream, label, files, nbytes, enabled=True, unit="files"):
        """stream: a management command's OutputWrapper (self.stderr)."""
        self.stream, self.label, self.files, self.nbytes = stream, label, files, nbytes
        self.unit = unit
        self.enabled, self.started = enabled, time.monotonic()

    def show(self, files, nbytes, final=False):
        if not self.enabled:
            return
        elapsed = max(time.monotonic() - self.started, 1e-6)
        rate = nbytes / elapsed
        share = nbytes / self.nbytes if self.nbytes else 1.0
        eta = "--:--:--" if not rate and not final else _clock(
            0 if final else (self.nbytes - nbytes) / rate)
        bar = "#" * int(share * 24)
        self.stream.write(
            f"\r{self.label} [{bar:<24}] {share * 100:5.1f}%  {files}/{self.files} {self.unit}  "
            f"{_bytes(nbytes)}/{_bytes(self.nbytes)}  {_bytes(rate)}/s  "
            f"ETA {eta} ", ending="\n" if final else "")
        self.stream.flush()


class Command(DomainCommand):
    help = ("Ingest the granules in a local directory (grouped by the collection's file "
            "patterns) for a provider, with a progress bar.")

    def add_arguments(self, parser):
        parser.add_argument("directory")
        parser.add_argument("--collection", required=True, help="SHORT.VERSION")
        parser.add_argument("--provider", required=True)
        parser.add_argument("--wait", action="store_true",
                            help="Wait until every granule is archived on tape (or failed)")
        parser.add_argument("--timeout", type=float, default=3600.0, help="Seconds --wait waits")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, directory, collection, provider, wait, timeout, no_progress,
               **options):
        try:
            collection = Collection.objects.get_by_key(collection)
            provider = Provider.objects.get(name=provider)
        except (Collection.DoesNotExist, Provider.DoesNotExist) as exc:
            raise CommandError(str(exc) or "no such provider") from exc
        request, stray = stage_directory(provider, collection, directory)
        for name in stray:
            self.stderr.write(f"left out (no complete granule): {name}")
        rows = list(IngestGranule.objects.filter(request=request).order_by("position")
                    .values_list("position", "bytes_total", "spec"))
        files_upto, bytes_upto, nfiles, nbytes = {}, {}, 0, 0
        for position, size, spec in rows:
            nfiles += len(spec["files"])
            nbytes += size
            files_upto[position + 1], bytes_upto[position + 1] = nfiles, nbytes
        show = not no_progress
        self.stderr.style_func = None  # the bar is information, not an error
        bar = Progress(self.stderr, "ingest ", nfiles, nbytes, enabled=show)
        bar.show(0, 0)
        chunk = max(1, min(200, len(rows) // 100))  # about a hundred updates of the bar
        run_request(request.pk, chunk=chunk,
                    on_chunk=lambda stop: bar.show(files_upto[stop], bytes_upto[stop]))
        bar.show(nfiles, nbytes, final=True)
        if wait:
            self._wait(request, timeout, show)
        self._report(request)

    def _wait(self, request, timeout, show):
        bar = Progress(self.stderr, "archive", request.granule_count, request.bytes_total,
                       enabled=show, unit="granules")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            request.refresh_from_db()
            bar.show(request.archived_count + request.failed_count, request.bytes_done,
                     final=request.finished)
            if request.finished:
                return
            sweep()
            time.sleep(1)
        raise CommandError(f"ingest request {request.pk} not finished after {timeout:g} s; "
                           "the storage manager may be stopped")

    def _report(self, request):
        request.refresh_from_db()
        counts = state_counts(request)
        summary = ", ".join(f"{n} {state}" for state, n in counts.items() if n)
        self.stdout.write(f"ingest request {request.pk}: {summary}")
        failed = IngestGranule.objects.filter(request=request,
                                              state=IngestGranule.State.FAILED)
        for g in failed.order_by("position")[:20]:
            self.stdout.write(f"  failed {g.granule_id}: {g.reason}")
        if counts[IngestGranule.State.FAILED]:
            raise CommandError(f"{counts[IngestGranule.State.FAILED]} granule(s) failed; fix "
                               f"them and retry: POST /api/v1/ingest/requests/{request.pk}/retry/")
