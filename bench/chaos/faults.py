"""The faults and operator actions of a chaos run. Damage goes where an operator meets it (a
byte in a volume, a byte in the cache, a volume cut short, failing drives), never to both
copies of one file: a file damaged once is never chosen again, so anything lost is the
archive's doing. The big object is never damaged here (a sample order would recall it into the
squeezed cache): its own check is in s3.py."""
import os
import threading
import time

from django.db.models import Q

from bench.tgt_library import flip_byte

from .provider import BIG
from .watch import with_db


class Faults:
    """Each method does one thing to the running archive and returns a line for the log."""

    def __init__(self, rng, operator, fleet, postgres, rabbit, collection_ids, library=None):
        self.rng, self.operator, self.fleet = rng, operator, fleet
        self.library = library     # tapelib.TapeLibrary on SCSI tape
        self.postgres, self.rabbit = postgres, rabbit
        self.collection_ids = list(collection_ids)
        self.damaged = set()   # file ids with one damaged copy: never damaged again
        self.events = []       # (epoch s, line)
        self.last_disruption = 0.0

    def log(self, line, disruption=False):
        now = time.time()
        self.events.append((round(now, 3), line))
        if disruption:
            self.last_disruption = now
        print(f"chaos {time.strftime('%H:%M:%S')}  {line}", flush=True)

    # --- processes and servers ---------------------------------------------------------------

    def kill(self):
        name = self.rng.choice(self.fleet.names)
        self.fleet.kill(name)
        time.sleep(self.rng.uniform(0.2, 2.0))
        self.fleet.start(name)
        self.log(f"kill -9 {name}, restarted", disruption=True)

    def restart_broker(self, during=None):
        self._outage("RabbitMQ", self.rabbit.stop, self.rabbit.start, during)

    def restart_database(self, during=None):
        from django.db import connections

        def stop():
            connections.close_all()
            self.postgres.stop(mode=self.rng.choice(["fast", "immediate"]))

        self._outage("PostgreSQL", stop, self.postgres.start, during)

    def _outage(self, what, stop, start, during):
        """Stop a server, let `during` (a provider's submission) meet it down for a few
        seconds from a thread of its own, start the server again."""
        started = time.monotonic()
        stop()
        thread = threading.Thread(target=during, daemon=True) if during else None
        if thread:
            thread.start()
        time.sleep(3)
        start()
        if thread:
            thread.join()
        self.log(f"{what} restarted ({time.monotonic() - started:.1f} s"
                 f"{', a batch submitted while it was down' if during else ''})",
                 disruption=True)

    def kill_target(self, patience_s=120):
        """kill -9 tgtd while a drive writes (a cartridge's backing file growing; the first
        seen in `patience_s`, else now), then start it again on the same cartridges (all back
        in their slots, the drives empty)."""
        from backend.archive.models import Drive

        def writing():
            names = with_db(lambda: list(Drive.objects.filter(state=Drive.State.WRITING)
                                         .values_list("name", flat=True)[:1]))
            return f"a cartridge in {names[0]}" if names else None

        cartridge = self.library.wait_for_a_write(patience_s, writing)
        self.library.kill()
        time.sleep(self.rng.uniform(0.5, 3.0))
        self.library.start()
        self._drop_sessions()
        self.log(f"tgt killed -9 {'while ' + cartridge + ' was written' if cartridge else ''}"
                 f" and started again (tgtd {self.library.pid})", disruption=True)

    @staticmethod
    def _drop_sessions():
        """This process's own sessions to the library (it labelled the cartridges and reads
        them to judge) died with the target: dropped, as a worker drops its own on the first
        failure."""
        from django.conf import settings

        from backend.archive.media.scsi.library import library_for

        library_for(settings.GRANARY_SCSI).reset()

    # --- operator actions through the API ----------------------------------------------------

    def vary(self):
        from backend.archive.models import Drive

        names = with_db(lambda: list(Drive.objects.exclude(state=Drive.State.OFFLINE)
                                     .values_list("name", flat=True)))
        if not names:
            return self.log("vary: no drive online")
        name = self.rng.choice(names)
        for _ in range(30):  # a busy drive refuses (409): the operator tries again
            status, answer = self.operator.call(
                "POST", f"/api/v1/archive/drives/{name}/vary/",
                {"online": False, "reason": "chaos"}, ok=(200, 409))
            if status == 200:
                break
            time.sleep(1)
        else:
            return self.log(f"vary off {name} refused for 30 s ({status}): {answer}")
        time.sleep(self.rng.uniform(1, 4))
        self.operator.call("POST", f"/api/v1/archive/drives/{name}/vary/", {"online": True})
        self.log(f"drive {name} varied off and on")

    def repack(self):
        from backend.archive.models import Volume

        # not a volume of the big object: its repack would recall it into the squeezed cache
        labels = with_db(lambda: list(
            Volume.objects.filter(state__in=[Volume.State.FULL, Volume.State.FILLING],
                                  file_count__gt=0).order_by("-state", "label")
            .exclude(copies__file__granule__granule_id__startswith=BIG)
            .values_list("label", flat=True)))
        full = [label for label in labels[:4]]
        for label in self.rng.sample(full, len(full)):
            status, answer = self.operator.call(
                "POST", f"/api/v1/archive/volumes/{label}/repack/", ok=(202, 409))
            if status == 202:
                return self.log(f"repack of {label} started (request {answer['id']})")
        self.log(f"repack: no volume could be repacked ({labels[:4]})")

    def faulty_drives(self):
        """Two drives of the primary group's silo fail every write from now on."""
        from backend.archive.models import Drive, VolumeGroup

        def inject():
            silo = VolumeGroup.objects.get(name="primary").silo
            drives = list(Drive.objects.filter(silo=silo).order_by("name"))[:2]
            Drive.objects.filter(pk__in=[d.pk for d in drives]).update(fault={"write": 0})
            return [d.name for d in drives]

        self.log(f"drives {', '.join(with_db(inject))} now fail every write")

    # --- damage to bytes ---------------------------------------------------------------------

    def _live_copies(self, **filters):
        """Verified copies of the run's files, in tape order (damaged files' included)."""
        from backend.archive.models import FileCopy

        return with_db(lambda: list(
            FileCopy.objects.filter(state=FileCopy.State.VERIFIED,
                                    file__granule__collection_id__in=self.collection_ids,
                                    **filters)
            .select_related("volume__silo", "file__granule").order_by("volume__label", "position")))

    @staticmethod
    def spared(copy):
        return copy.file.granule.granule_id.startswith(BIG)

    def flip_volume_byte(self):
        from backend.archive.services.paths import volume_path

        copies = [c for c in self._live_copies(volume__group__name="primary")
                  if c.file_id not in self.damaged and not self.spared(c)]
        if not copies:
            return self.log("flip volume byte: no verified copy yet")
        copy = self.rng.choice(copies)
        if self.library:
            self.library.flip(copy.volume.label, copy.data_offset + copy.length // 2)
        else:
            flip_byte(volume_path(copy.volume), copy.data_offset + copy.length // 2)
        self.damaged.add(copy.file_id)
        self.log(f"flipped a byte of file {copy.file_id} copy {copy.copy_number} on volume "
                 f"{copy.volume.label}")

    def truncate_volume(self):
        """Cut a backup volume short in its last quarter, after every member of a file already
        damaged (a cut takes every member past it)."""
        from backend.archive.services.paths import volume_path

        by_volume = {}
        for copy in self._live_copies(volume__group__name="backup"):
            by_volume.setdefault(copy.volume, []).append(copy)
        cuts = {}
        for volume, members in by_volume.items():
            first = max([i + 1 for i, c in enumerate(members) if c.file_id in self.damaged],
                        default=0)
            first = max(first, len(members) * 3 // 4)
            if len(members) >= 4 and first < len(members) and not any(
                    self.spared(c) for c in members[first:]):
                cuts[volume] = members[first:]
        if not cuts:
            return self.log("truncate volume: no volume with four live copies yet")
        volume = self.rng.choice(sorted(cuts, key=lambda v: v.label))
        cut = cuts[volume]
        end = cut[0].data_offset + cut[0].length // 2
        os.truncate(volume_path(volume), end)
        self.damaged |= {c.file_id for c in cut}
        self.log(f"truncated volume {volume.label} at {end} bytes ({len(cut)} copies cut)")

    def flip_cache_byte(self):
        from backend.archive.models import CacheEntry
        from backend.archive.services.paths import cache_path

        def choose():
            return list(CacheEntry.objects.filter(
                state=CacheEntry.State.CLEAN, size__gt=0,
                file__granule__collection_id__in=self.collection_ids)
                .exclude(file_id__in=self.damaged)
                .exclude(file__granule__granule_id__startswith=BIG)
                .select_related("file__granule__collection")
                .order_by("file_id")[:200])

        entries = with_db(choose)
        if not entries:
            return self.log("flip cache byte: no clean cached file")
        entry = self.rng.choice(entries)
        path = cache_path(entry.file)
        try:
            flip_byte(path, entry.size // 2)
        except OSError as exc:
            return self.log(f"flip cache byte: {path}: {exc}")
        self.damaged.add(entry.file_id)
        self.log(f"flipped a byte of cached file {entry.file_id}")

    def files_of(self, granule_ids):
        from backend.catalog.models import File

        return with_db(lambda: list(
            File.objects.filter(granule__collection_id__in=self.collection_ids,
                                granule__granule_id__in=granule_ids)
            .filter(~Q(granule__state="deleted")).values_list("pk", flat=True)))
