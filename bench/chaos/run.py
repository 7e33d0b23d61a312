"""One chaos run, inside the process whose database, broker and S3 server are the run's own: set
up, ingest under faults, wait for quiet, reconcile, order and download a sample, judge."""
import os
import random
import time

from django.conf import settings
from django.core.management import call_command

from bench import live, tgt_library

from . import reasons, report, s3, tapelib, verify
from .client import Api
from .faults import Faults
from .fleet import Fleet
from .orders import OrderRun
from .provider import BIG, LARGE, MB, Provider, batches, plan
from .services import Postgres, Rabbit, free_port
from .watch import Sampler, stuck_examples, unfinished, wait_quiet, with_db

# The archive's timers, shortened so a killed process's work comes back within a short run:
# leases a killed mover or ingest worker leaves behind, and when the sweeper calls work stale.
# A fault that takes `during` meets the slot's batch submitted while it is on.
OUTAGES = ("restart_broker", "restart_database", "s3_kill", "s3_keys", "s3_bucket")
LEASES = {"GRANARY_DRIVE_LEASE_S": "15", "GRANARY_INGEST_LEASE_S": "30",
          "GRANARY_INGEST_STALE_S": "30", "GRANARY_OBJECT_LEASE_S": "15"}
# The run's collections: tape only (two tape copies), and copy 1 in a bucket with copy 2 on
# tape (chaos-late's bucket is missing for a while); granules are dealt to them in this turn.
TAPE, OBJECTS, LATE = "CHAOS", "CHAOSOBJ", "CHAOSLATE"
DRIVES_PER_SILO = 4
DEAL = [{"T": TAPE, "O": OBJECTS, "L": LATE}[k] + ".1" for k in "TOTLTOTOTOTLTOTOTLTO"]


def sizes(total_bytes, big_bytes=0):
    """(volume capacity, volumes per silo): volumes small enough to fill and span, sized by the
    bytes without the big object, which spans many."""
    capacity = max(64 * MB, (total_bytes - big_bytes) // 8)  # several times SPAN_MIN (16 MiB)
    return capacity, int(2 * total_bytes / capacity) + 6


def _setup(options, total_bytes, big_bytes=0):
    """Database, layout (two silos of four drives, volumes of `sizes`), the run's three
    collections with two-copy policies (two of them copy 1 in a bucket), and the three
    accounts; ([collections], {role: token})."""
    from backend.accounts import roles
    from backend.accounts.services import create_user
    from backend.archive import operations
    from backend.archive.models import Bucket, VolumeGroup

    call_command("migrate", verbosity=0)
    capacity, volumes = sizes(total_bytes, big_bytes)
    collections = live.layout([TAPE, OBJECTS, LATE], capacity_bytes=capacity,
                              drives_per_silo=DRIVES_PER_SILO, volumes_per_silo=volumes)
    groups = {g.name: g for g in VolumeGroup.objects.all()}
    buckets = {name: Bucket.objects.create(name=name, store="default", bucket=bucket)
               for name, bucket in s3.BUCKETS.items()}
    operations.set_policy(collections[1], [buckets[s3.OBJECTS], groups["primary"]])
    operations.set_policy(collections[2], [buckets[s3.LATE], groups["backup"]])
    reasons.install_reason_log()
    tokens = {"provider": live.provider_token("CHAOS", collections),
              "operator": create_user("chaos-operator", roles.OPERATOR)[2],
              "user": create_user("chaos-user", roles.USER)[2]}
    return collections, tokens


def _environment(options, library=None):
    env = dict(os.environ, **live.NO_WAITS, **LEASES, GRANARY_LOG_LEVEL="INFO",
               GRANARY_CACHE_GB="64", GRANARY_S3_TIMEOUT_S="5",
               DJANGO_SETTINGS_MODULE="backend.settings",
               **(library.environment() if library else {"GRANARY_TAPE": "emulator"}))
    if options.get("lease_s"):
        env.update({name: str(options["lease_s"]) for name in LEASES})
    return env


def _schedule(rng, options, slots, scsi=False):
    """{slot: [action names]}: early slots get kills, the broker restart, faulty drives and
    varies; the late ones (copies on tape by then) the damage, repacks, the cache squeeze,
    the database restart and the rest. The S3 store faults come as the server is up (s3.py).
    On SCSI tape the target is killed mid-write early and again with the damage, in place of
    the volume cut short (a cartridge's backing file cut is tgt's format broken, not a tape's
    end)."""
    kills, varies = ["kill"] * options["kills"], ["vary"] * options["varies"]
    early = kills[: len(kills) // 2] + varies[: len(varies) // 2] + [
        "faulty_drives", "restart_broker"] + (["kill_target"] if scsi else [])
    late = (kills[len(kills) // 2:] + varies[len(varies) // 2:] + ["repack"] * options["repacks"]
            + ["restart_database"])
    half = max(1, slots // 2)
    out = {}
    for name in early:
        out.setdefault(rng.randrange(0, half), []).append(name)
    out.setdefault(half, []).extend(["squeeze", "flip_volume_byte",
                                     "kill_target" if scsi else "truncate_volume",
                                     "flip_cache_byte"])
    if "damage" in options["s3_faults"]:   # objects damaged too, never a file damaged above
        out[half].append("s3_damage")
    for name in late:
        out.setdefault(rng.randrange(half, slots + 1), []).append(name)
    return out


class Run:
    """The state of one run, shared by its phases."""

    def __init__(self, options, services):
        self.options, self.rng = options, random.Random(options["seed"])
        self.postgres = Postgres(**services["postgres"])
        self.rabbit = Rabbit(**services["rabbit"])
        self.run_dir = self.postgres.run_dir
        self.result = {"options": {k: options[k] for k in (
            "granules", "large", "kills", "varies", "repacks", "seed", "big_object_gb",
            "s3_late_s", "s3_faults")}}
        self.orders = []
        self.big = self.big_order = self.big_fault = None

    def start(self):
        s3_faults = self.options["s3_faults"]
        big = int(self.options["big_object_gb"] * 2**30) if "big" in s3_faults else 0
        rows = plan(self.rng, self.options["granules"], self.options["large"],
                    (self.options["large_mb_min"], self.options["large_mb_max"]), DEAL,
                    big_bytes=big, big_collection=f"{OBJECTS}.1")
        total = sum(r[1] for r in rows)
        self.library = self._start_library(total, big) if self.options["tape"] == "scsi" \
            else None
        self.collections, tokens = _setup(self.options, total, big)
        self.collection_ids = [c.pk for c in self.collections]
        self.largest = max(r[1] for r in rows if not r[0].startswith(BIG))
        self.fleet = Fleet(self.run_dir, _environment(self.options, self.library), free_port())
        self.s3 = s3.Server(self.run_dir, settings.GRANARY_OBJECT_STORES["default"])
        self.fleet.start_all()
        base = f"http://127.0.0.1:{self.fleet.web_port}"
        self.apis = {role: Api(base, token) for role, token in tokens.items()}
        self.apis["provider"].call("GET", "/api/v1/ingest/requests/?limit=1")
        from backend.accounts.models import Provider as ProviderRow
        from ingest.services import staging_area

        area = staging_area(ProviderRow.objects.get(name="CHAOS"))
        self.provider = Provider(self.apis["provider"], area, self.options["seed"])
        self.faults = Faults(self.rng, self.apis["operator"], self.fleet, self.postgres,
                             self.rabbit, self.collection_ids, self.library)
        self.sampler = Sampler()
        self.sampler.start()
        self.reasons = reasons.Reasons()
        self.reasons.start()
        self.objects = s3.ObjectFaults(self, self.s3, self.reasons, s3_faults,
                                       self.options["s3_late_s"])
        return rows

    def _start_library(self, total, big):
        """tgt's virtual library with a drive per logical drive and a cartridge per volume the
        layout labels (this process labels them: its settings point there too)."""
        capacity, volumes = sizes(total, big)
        library = tapelib.TapeLibrary(
            self.run_dir, self.options.get("iscsi_port") or tgt_library.free_port(3300, 500),
            2 * DRIVES_PER_SILO,
            tgt_library.barcodes(2, volumes), int(capacity * 1.1 / 2**20) + 16).start()
        settings.GRANARY_TAPE, settings.GRANARY_SCSI = "scsi", library.config
        print(f"chaos  virtual library on {library.config['portal']} (tgtd {library.pid}, "
              f"{2 * DRIVES_PER_SILO} drives, {2 * volumes} cartridges)", flush=True)
        return library

    def chaos(self, rows):
        """Submit the batches with the scheduled faults between them."""
        groups = batches(rows, max(6, len(rows) // 50))
        todo = _schedule(self.rng, self.options, len(groups), scsi=self.library is not None)
        self.started = time.time()
        self.objects.begin()
        for slot in range(len(groups) + 1):
            actions = todo.get(slot, []) + self.objects.due(slot)
            outage = next((a for a in actions if a in OUTAGES), None)
            submit = self._submitter(slot, groups) if slot < len(groups) else None
            if outage:  # the batch meets the server down
                actions.remove(outage)
                self._do(outage, during=submit)
            elif submit:
                submit()
            if slot == max(1, len(groups) // 2):
                self._wait_for_tape()
            for action in actions:
                self._do(action)
            self._big_step()
            time.sleep(self.rng.uniform(0.5, 2.0))
        for action in self.objects.catch_up():   # no batch left: an order meets the fault
            self._do(action, during=self._probe_order)
        if "damage" in self.options["s3_faults"] and not any(
                r.phrase == s3.FAILED_CHECK for r in self.objects.records):
            self._do("s3_damage")   # a short run: the slots were over before the damage
        self._big_step(wait=True)

    def _submitter(self, slot, groups):
        def submit():
            self.provider.submit(slot, groups[slot])
            self.faults.log(f"batch {slot + 1}/{len(groups)} submitted "
                            f"({len(groups[slot])} granules)")
        return submit

    def _do(self, action, **kwargs):
        try:
            if action in ("squeeze", "s3_damage"):
                return getattr(self, action)()
            target = self.objects if action.startswith("s3_") else self.faults
            getattr(target, action)(**kwargs)
        except Exception as exc:  # noqa: BLE001 - one failed action is logged, the run goes on
            self.faults.log(f"{action} failed: {exc!r}")

    def _archived(self, kind=None):
        """(pk, granule id) of archived granules: all, or the "large", "big" or "small"."""
        from backend.catalog.models import Granule

        rows = Granule.objects.filter(collection_id__in=self.collection_ids,
                                      state=Granule.State.ARCHIVED)
        if kind == "large":
            rows = rows.filter(granule_id__startswith=LARGE)
        elif kind == "big":
            rows = rows.filter(granule_id__startswith=BIG)
        elif kind == "small":
            rows = rows.exclude(granule_id__startswith=LARGE).exclude(
                granule_id__startswith=BIG)
        return with_db(lambda: list(rows.order_by("granule_id").values_list("pk", "granule_id")))

    def _wait_for_tape(self, timeout=180):
        """Damage needs copies on tape and the squeeze an archived large granule."""
        want = len(self.provider.originals) // 3
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            large = min(2, sum(o.large for o in self.provider.originals.values()))
            if len(self._archived()) >= want and len(self._archived("large")) >= large:
                return
            time.sleep(1)
        self.faults.log("tape still nearly empty: damage goes where it can")

    def squeeze(self):
        """Order archived granules (large ones first) whose cache copies were released, with
        the cache made smaller than the order: it must be staged in parts. The big object's
        order is over first (it would never fit the squeezed cache)."""
        self._big_step(wait=True)
        chosen = (self._archived("large")[:max(2, self.options["large"] // 3)]
                  + self._archived("small")[:10])
        files = self.faults.files_of([g for _, g in chosen])
        self._release(files)
        size = sum(self.provider.originals[g].size for _, g in chosen)
        # smaller than the order, yet any file of the run fits below the high watermark
        cache_gb = max(size * 0.6, self.largest * 1.6) / 2**30
        self.fleet.env["GRANARY_CACHE_GB"] = f"{cache_gb:.6f}"
        self.fleet.restart_all()
        self.faults.log(f"cache squeezed to {cache_gb * 1024:.1f} MiB for an order of "
                        f"{size / MB:.1f} MiB; every process restarted", disruption=True)
        self._order([pk for pk, _ in chosen], "squeezed order")

    def s3_damage(self):
        """An object deleted and one's bytes replaced behind Granary's back, their cache copies
        released and their granules ordered with a few other object-copy granules: each recall
        reads the object first. Done once the server is up, never during a store fault: the
        next waits until the recalls met the damage."""
        if not self.s3.up or (self.objects.up_thread and self.objects.up_thread.is_alive()):
            return self.faults.log("S3 damage: the server is not up yet; done after the slots")
        damaged = self.objects.damage({pk for order in self.orders for pk in order.granule_pks})
        if not damaged:
            return
        from backend.catalog.models import Granule

        others = with_db(lambda: list(Granule.objects.filter(
            collection_id__in=self.collection_ids[1:], state=Granule.State.ARCHIVED)
            .exclude(granule_id__startswith=BIG).exclude(granule_id__startswith=LARGE)
            .exclude(pk__in=damaged).order_by("-pk").values_list("pk", "granule_id")[:8]))
        pks = damaged + [pk for pk, _ in others]
        names = with_db(lambda: list(Granule.objects.filter(pk__in=pks).values_list(
            "granule_id", flat=True)))
        files = self.faults.files_of(names)
        self._release(files)
        self._order(pks, "object order")
        self.objects.await_damage()

    def _probe_order(self):
        """A user's order of two granules whose copy 1 is an object, their cache copies
        released: object work for a store fault to meet when no batch is left to submit (with
        the store down, the recalls are served from tape with the store's reason)."""
        from backend.catalog.models import Granule

        ordered = {pk for order in self.orders for pk in order.granule_pks}
        chosen = with_db(lambda: list(Granule.objects.filter(
            collection_id__in=self.collection_ids[1:], state=Granule.State.ARCHIVED)
            .exclude(granule_id__startswith=BIG).exclude(granule_id__startswith=LARGE)
            .exclude(pk__in=ordered).exclude(files__pk__in=list(self.faults.damaged))
            .order_by("pk").values_list("pk", "granule_id")[:2]))
        if chosen:
            self._release(self.faults.files_of([g for _, g in chosen]))
            self._order([pk for pk, _ in chosen], "probe order")

    def _big_step(self, wait=False):
        """Once the big object is archived: release its cache copy and order it (it is
        recalled from its bucket, then downloaded); with wait, until that order is over."""
        big = next((o for o in self.provider.originals.values() if o.big), None)
        if big is None:
            return
        if self.big_fault is None:
            self.big_fault = self.objects.big_record(big, self.started)
        deadline = time.monotonic() + self.options["timeout"]
        while self.big_order is None:
            archived = self._archived("big")
            if archived:
                files = self.faults.files_of([big.granule_id])
                self._release(files)
                self.big_order = self._order([archived[0][0]], "big object order")
            elif not wait or time.monotonic() > deadline:
                return
            else:
                time.sleep(2)
        if wait and self.big_order.is_alive():
            self.big_order.join(timeout=max(1, deadline - time.monotonic()))

    def _release(self, files):
        """Release the files' clean cache copies, as an operator would, one file at a time: a
        file already purged (409, not in the cache) needs nothing, and one refusal must not
        keep the others in the cache."""
        for pk in files:
            self.apis["operator"].call("POST", "/api/v1/archive/cache/release/",
                                       {"files": [pk]}, ok=(200, 409))

    def _order(self, pks, label, wait=False, patience_s=None):
        order = OrderRun(self.apis["user"], pks, self._by_name(),
                         patience_s or self.options["timeout"], label)
        order.place()
        self.faults.log(f"{label} {order.order_id} placed ({len(pks)} granules)")
        self.orders.append(order)
        order.start()
        if wait:
            order.join()
        return order

    def _by_name(self):
        return {o.name: o for o in self.provider.originals.values()}

    def finish(self):
        timeout = self.options["timeout"]
        quiet_at, left = wait_quiet(timeout)
        self.result["recovery_s"] = (round(quiet_at - self.faults.last_disruption, 1)
                                     if quiet_at else None)
        self.result["unfinished_after_chaos"] = left
        self.faults.log(f"quiet after chaos: {quiet_at is not None} {left}")
        self.result["repairs"] = with_db(lambda: verify.reconcile(repair=True))
        _, left = wait_quiet(timeout if quiet_at else timeout / 4)
        self.result["discrepancies"] = with_db(lambda: verify.reconcile(repair=False))
        self.result["past_end_of_data"] = with_db(verify.past_end_of_data)
        # on a quiet archive a sample is ready in seconds: a third of the timeout is plenty
        self._order(self._sample(), "sample order", wait=True, patience_s=timeout / 3)
        for order in self.orders:
            order.join(timeout=5)
        self.result["stuck_detail"] = with_db(unfinished)
        self.result["stuck_examples"] = with_db(stuck_examples)
        self.objects.end_damage()
        if self.big_fault is not None:
            self.objects.end_big(self.big_fault, self.big_order)
        return self._judge()

    def _sample(self):
        small = [pk for pk, _ in self._archived("small")]
        damaged = set(self.faults.damaged)
        from backend.catalog.models import File

        touched = with_db(lambda: set(File.objects.filter(pk__in=damaged)
                                      .values_list("granule_id", flat=True)))
        picked = set(self.rng.sample(small, min(len(small), max(20, len(small) // 10))))
        large = [pk for pk, _ in self._archived("large")][:2]
        return sorted(picked | touched | set(large))

    def _judge(self):
        self.sampler.stop()
        self.reasons.stop()
        checked = verify.copies_check(self.collection_ids, self.provider.originals,
                                      self.s3.root, self.library and
                                      tapelib.StreamFiles(self.library))
        self.result.update(report.judge(self, checked))
        return self.result

    def stop(self):
        if getattr(self, "objects", None):
            self.objects.stop()
        for thread in ("sampler", "reasons"):
            if getattr(self, thread, None) and getattr(self, thread).is_alive():
                getattr(self, thread).stop()
        if getattr(self, "fleet", None):
            self.fleet.stop_all()
        if getattr(self, "s3", None):
            self.s3.stop()
        if getattr(self, "library", None):
            self.library.stop()
