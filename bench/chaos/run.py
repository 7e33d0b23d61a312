"""One chaos run, inside the process whose database and broker are the run's own: set up, ingest
under faults, wait for quiet, reconcile, order and download a sample, judge."""
import os
import random
import time

from django.core.management import call_command

from bench import live

from . import report, verify
from .client import Api
from .faults import Faults
from .fleet import Fleet
from .orders import OrderRun
from .provider import MB, Provider, batches, plan
from .services import Postgres, Rabbit, free_port
from .watch import Sampler, unfinished, wait_quiet, with_db

# The archive's timers, shortened so a killed process's work comes back within a short run:
# leases a killed mover or ingest worker leaves behind, and when the sweeper calls work stale.
OUTAGES = ("restart_broker", "restart_database")
LEASES = {"GRANARY_DRIVE_LEASE_S": "15", "GRANARY_INGEST_LEASE_S": "30",
          "GRANARY_INGEST_STALE_S": "30"}


def _setup(options, total_bytes):
    """Database, layout (two silos of four drives, volumes small enough to fill and span),
    a collection with a two-copy policy, and the three accounts; {role: token}."""
    from backend.accounts import roles
    from backend.accounts.services import create_user

    call_command("migrate", verbosity=0)
    capacity = max(64 * MB, total_bytes // 8)  # several times SPAN_MIN (16 MiB)
    volumes = int(2 * total_bytes / capacity) + 6
    (collection,) = live.layout(["CHAOS"], capacity_bytes=capacity, drives_per_silo=4,
                                volumes_per_silo=volumes)
    tokens = {"provider": live.provider_token("CHAOS", [collection]),
              "operator": create_user("chaos-operator", roles.OPERATOR)[2],
              "user": create_user("chaos-user", roles.USER)[2]}
    return collection, tokens


def _environment(options):
    env = dict(os.environ, **live.NO_WAITS, **LEASES, GRANARY_LOG_LEVEL="INFO",
               GRANARY_CACHE_GB="64", DJANGO_SETTINGS_MODULE="backend.settings")
    if options.get("lease_s"):
        env.update({name: str(options["lease_s"]) for name in LEASES})
    return env


def _schedule(rng, options, slots):
    """{slot: [action names]}: early slots get kills, the broker restart, faulty drives and
    varies; the late ones (copies on tape by then) the damage, repacks, the cache squeeze,
    the database restart and the rest."""
    kills, varies = ["kill"] * options["kills"], ["vary"] * options["varies"]
    early = kills[: len(kills) // 2] + varies[: len(varies) // 2] + [
        "faulty_drives", "restart_broker"]
    late = (kills[len(kills) // 2:] + varies[len(varies) // 2:] + ["repack"] * options["repacks"]
            + ["restart_database"])
    half = max(1, slots // 2)
    out = {}
    for name in early:
        out.setdefault(rng.randrange(0, half), []).append(name)
    out.setdefault(half, []).extend(["squeeze", "flip_volume_byte", "truncate_volume",
                                     "flip_cache_byte"])
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
            "granules", "large", "kills", "varies", "repacks", "seed")}}
        self.orders = []

    def start(self):
        rows = plan(self.rng, self.options["granules"], self.options["large"],
                    (self.options["large_mb_min"], self.options["large_mb_max"]))
        self.collection, tokens = _setup(self.options, sum(r[1] for r in rows))
        self.largest = max(r[1] for r in rows)
        self.fleet = Fleet(self.run_dir, _environment(self.options), free_port())
        self.fleet.start_all()
        base = f"http://127.0.0.1:{self.fleet.web_port}"
        self.apis = {role: Api(base, token) for role, token in tokens.items()}
        self.apis["provider"].call("GET", "/api/v1/ingest/requests/?limit=1")
        from backend.accounts.models import Provider as ProviderRow
        from ingest.services import staging_area

        area = staging_area(ProviderRow.objects.get(name="CHAOS"))
        self.provider = Provider(self.apis["provider"], area, self.collection.key,
                                 self.options["seed"])
        self.faults = Faults(self.rng, self.apis["operator"], self.fleet, self.postgres,
                             self.rabbit, self.collection.pk)
        self.sampler = Sampler()
        self.sampler.start()
        return rows

    def chaos(self, rows):
        """Submit the batches with the scheduled faults between them."""
        groups = batches(rows, max(6, len(rows) // 50))
        todo = _schedule(self.rng, self.options, len(groups))
        self.started = time.time()
        for slot in range(len(groups) + 1):
            actions = todo.get(slot, [])
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
            time.sleep(self.rng.uniform(0.5, 2.0))

    def _submitter(self, slot, groups):
        def submit():
            self.provider.submit(slot, groups[slot])
            self.faults.log(f"batch {slot + 1}/{len(groups)} submitted "
                            f"({len(groups[slot])} granules)")
        return submit

    def _do(self, action, **kwargs):
        try:
            if action == "squeeze":
                return self.squeeze()
            getattr(self.faults, action)(**kwargs)
        except Exception as exc:  # noqa: BLE001 - one failed action is logged, the run goes on
            self.faults.log(f"{action} failed: {exc!r}")

    def _archived(self, large=None):
        from backend.catalog.models import Granule

        rows = Granule.objects.filter(collection=self.collection, state=Granule.State.ARCHIVED)
        if large is not None:
            rows = rows.filter(granule_id__startswith="CHAOS-L") if large else rows.exclude(
                granule_id__startswith="CHAOS-L")
        return with_db(lambda: list(rows.order_by("granule_id").values_list("pk", "granule_id")))

    def _wait_for_tape(self, timeout=180):
        """Damage needs copies on tape and the squeeze an archived large granule."""
        want = len(self.provider.originals) // 3
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            large = min(2, sum(o.large for o in self.provider.originals.values()))
            if len(self._archived()) >= want and len(self._archived(large=True)) >= large:
                return
            time.sleep(1)
        self.faults.log("tape still nearly empty: damage goes where it can")

    def squeeze(self):
        """Order archived granules (large ones first) whose cache copies were released, with
        the cache made smaller than the order: it must be staged in parts."""
        chosen = (self._archived(large=True)[:max(2, self.options["large"] // 3)]
                  + self._archived(large=False)[:10])
        files = self.faults.files_of([g for _, g in chosen])
        self.apis["operator"].call("POST", "/api/v1/archive/cache/release/", {"files": files})
        size = sum(self.provider.originals[g].size for _, g in chosen)
        # smaller than the order, yet any file of the run fits below the high watermark
        cache_gb = max(size * 0.6, self.largest * 1.6) / 2**30
        self.fleet.env["GRANARY_CACHE_GB"] = f"{cache_gb:.6f}"
        self.fleet.restart_all()
        self.faults.log(f"cache squeezed to {cache_gb * 1024:.1f} MiB for an order of "
                        f"{size / MB:.1f} MiB; every process restarted", disruption=True)
        self._order([pk for pk, _ in chosen], "squeezed order")

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
        # on a quiet archive a sample is ready in seconds: a third of the timeout is plenty
        self._order(self._sample(), "sample order", wait=True, patience_s=timeout / 3)
        for order in self.orders:
            order.join(timeout=5)
        self.result["stuck_detail"] = with_db(unfinished)
        return self._judge()

    def _sample(self):
        small = [pk for pk, _ in self._archived(large=False)]
        damaged = set(self.faults.damaged)
        from backend.catalog.models import File

        touched = with_db(lambda: set(File.objects.filter(pk__in=damaged)
                                      .values_list("granule_id", flat=True)))
        picked = set(self.rng.sample(small, min(len(small), max(20, len(small) // 10))))
        large = [pk for pk, _ in self._archived(large=True)][:2]
        return sorted(picked | touched | set(large))

    def _judge(self):
        self.sampler.stop()
        checked = verify.tape_check(self.collection.pk, self.provider.originals)
        self.result.update(report.judge(self, checked))
        return self.result

    def stop(self):
        if getattr(self, "sampler", None) and self.sampler.is_alive():
            self.sampler.stop()
        if getattr(self, "fleet", None):
            self.fleet.stop_all()
