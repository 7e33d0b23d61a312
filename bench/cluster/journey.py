"""The journey through the cluster, from the client host over HTTP: a provider's bulk ingest,
an order recalled from tape and downloaded byte-exact, then one silo's storage manager host
down (its silo's work waits, queued, while the other silo's goes on) and back (the waiting work
completes). Each check prints a line; the first that fails raises Failed."""
import time

from bench.chaos.client import Api
from bench.chaos.orders import OrderRun
from bench.chaos.provider import KB, Provider

from .hosts import SILOS, WEB_PORT

DOWN = "sm-silo1"


class Failed(AssertionError):
    """A check of the journey did not hold."""


def say(text):
    print(text, flush=True)


def check(condition, what, detail=""):
    if not condition:
        raise Failed(f"{what}: {detail}" if detail else what)
    say(f"  ok  {what}")


class Journey:
    def __init__(self, network, hosts, tokens, collections):
        self.network, self.hosts, self.collections = network, hosts, collections
        self.base = f"http://{network.address('web')}:{WEB_PORT}"
        self.apis = {role: Api(self.base, token, patience_s=120) for role, token in tokens.items()}
        self.providers = {key: Provider(self.apis["provider"], None, key, seed)
                          for seed, key in enumerate(collections, start=1)}
        self.down = set()

    # -- waiting and reading state -----------------------------------------------------------
    def wait(self, predicate, what, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            dead = {n: rc for n, rc in self.hosts.dead().items()
                    if not any(n.endswith(h.removeprefix("sm-")) for h in self.down)}
            if dead:
                raise Failed(f"processes exited: {dead}\n" + "\n".join(
                    f"--- {n}\n{self.hosts.tail(n)}" for n in dead))
            time.sleep(0.5)
        raise Failed(f"{what}: not within {timeout} s")

    def originals(self):
        return {o.name: o for p in self.providers.values() for o in p.originals.values()}

    def ingest(self, key, number, names, size=300 * KB):
        provider = self.providers[key]
        rows = [(name, size + i * 7 * KB, True) for i, name in enumerate(names)]  # uploaded
        request = provider.submit(number, rows)
        say(f"  provider: bulk ingest request {request} of {len(rows)} granules into {key} "
            f"(files uploaded over HTTP: PUT /api/v1/ingest/uploads/...)")
        return request

    @staticmethod
    def granule(granule_id):
        from backend.catalog.models import Granule

        return Granule.objects.select_related("collection").get(granule_id=granule_id)

    @staticmethod
    def copies(granule_id):
        """{copy number: (state, silo)} of the granule's file."""
        from backend.archive.models import FileCopy

        return {c.copy_number: (c.state, c.volume.silo.name) for c in FileCopy.objects.filter(
            file__granule__granule_id=granule_id).select_related("volume__silo")}

    @staticmethod
    def requests(granule_id, kind):
        from backend.archive.models import ArchiveRequest

        return list(ArchiveRequest.objects.filter(
            file__granule__granule_id=granule_id, kind=kind).select_related(
            "drive__silo", "volume_group__silo").order_by("pk"))

    @staticmethod
    def archived(*granule_ids):
        """Whether every one is registered (the ingest worker may not have got to it) and
        ARCHIVED."""
        from backend.catalog.models import Granule

        return Granule.objects.filter(granule_id__in=granule_ids, state="archived").count() == len(
            granule_ids)

    def release(self, granule_id):
        from backend.archive.models import CacheEntry
        from backend.catalog.models import File

        file_ids = list(File.objects.filter(granule__granule_id=granule_id).values_list(
            "pk", flat=True))
        status, answer = self.apis["operator"].call("POST", "/api/v1/archive/cache/release/",
                                                    {"files": file_ids})
        check(status == 200 and not CacheEntry.objects.filter(file_id__in=file_ids).exists(),
              f"operator: cache copy of {granule_id} released, on tape only now "
              f"(POST /api/v1/archive/cache/release/ -> {status})", answer)

    def order(self, granule_id):
        order = OrderRun(self.apis["user"], [self.granule(granule_id).pk], self.originals(),
                         patience_s=600, label=granule_id)
        order.place()
        order.start()
        say(f"  user: order {order.order_id} of {granule_id} placed (HTTPS delivery)")
        return order

    def downloaded(self, order, granule_id):
        order.join(timeout=300)
        name = f"{granule_id}.dat"
        want = self.originals()[name]
        check(order.error is None and not order.corrupt and order.downloaded.get(name) == want.md5,
              f"user: order {order.order_id} downloaded {name} ({want.size} bytes) over HTTP, "
              f"MD5 {want.md5} equal to the provider's bytes", order.summary())

    def silo_queue(self, silo):
        """(messages, consumers) of the queue archive.<silo> on the broker; (0, 0) before
        anyone declared it (its storage manager still starting)."""
        from backend.celery import app

        with app.connection_for_write() as conn:
            bound = app.amqp.queues[f"archive.{silo}"].bind(conn.channel())
            try:
                _, messages, consumers = bound.queue_declare(passive=True)
            except conn.channel_errors:
                return 0, 0
        return messages, consumers

    # -- the journey -------------------------------------------------------------------------
    def run(self):
        self.show_hosts()
        self.tape_order()
        self.host_down()
        self.host_back()
        self.nothing_lost()

    def show_hosts(self):
        say("\n== 1. hosts (network namespaces on bridge "
            f"{self.network.bridge}, {self.network.cidr})")
        say(f"  db (root namespace) {self.network.gateway}: PostgreSQL, RabbitMQ")
        for host, procs in self.hosts.layout.items():
            say(f"  {host:<13} {', '.join(self.network.addresses(host)):<22} "
                f"{', '.join(n for n, _ in procs)}")
        say(f"  client        {', '.join(self.network.addresses('client'))}: this journey")
        self.wait(self._web_answers, "web answers the client", timeout=90)
        check(True, f"client reaches web at {self.base} (GET /api/health/ 200)")
        for silo in SILOS:
            self.wait(lambda s=silo: self.silo_queue(s)[1] == 1,
                      f"storage manager of {silo} consumes archive.{silo}", timeout=90)
            check(True, f"broker: queue archive.{silo} has one consumer "
                  f"(the storage manager on sm-{silo})")

    def _web_answers(self):
        try:
            return self.apis["user"].live.call("GET", "/api/health/", timeout=5)[0] == 200
        except OSError:
            return False

    def tape_order(self):
        two, one = self.collections
        say("\n== 2. ingest, then an order recalled from tape")
        self.ingest(two, 1, ["CLUSTER-A1", "CLUSTER-A2", "CLUSTER-A3"])
        self.ingest(one, 1, ["CLUSTER-B1"])
        firsts = ("CLUSTER-A1", "CLUSTER-A2", "CLUSTER-A3", "CLUSTER-B1")
        self.wait(lambda: self.archived(*firsts), "the first granules archived")
        for g in firsts[:3]:
            check(self.copies(g) == {1: ("verified", "silo1"), 2: ("verified", "silo2")},
                  f"{g} ARCHIVED: copy 1 verified on silo1, copy 2 on silo2", self.copies(g))
        check(self.copies("CLUSTER-B1") == {1: ("verified", "silo1")},
              f"CLUSTER-B1 ARCHIVED: its one copy verified on silo1 ({one} keeps one copy)")
        for silo in SILOS:
            log = self.hosts.tail(f"storage-manager-{silo}", 10**7)
            check("Task backend.archive.run_drive[" in log,
                  f"storage-manager-{silo}'s log shows it ran its drives (run_drive tasks)")
        check("Task backend.archive.run_drive[" not in self.hosts.tail("worker-archive", 10**7),
              "worker-archive (queue archive) ran no drive: drives run on their silo's host")
        self.release("CLUSTER-A1")
        order = self.order("CLUSTER-A1")
        self.downloaded(order, "CLUSTER-A1")
        recalls = self.requests("CLUSTER-A1", "recall")
        check(len(recalls) == 1 and recalls[0].state == "done",
              f"the file came back from tape: recall request {recalls[0].pk if recalls else '-'} "
              f"done on drive {recalls[0].drive if recalls else '-'}")

    def host_down(self):
        say(f"\n== 3. host {DOWN} down (every process in its namespace killed -9)")
        killed = self.hosts.kill(DOWN)
        self.down.add(DOWN)
        check(killed > 0 and not self.network.pids(DOWN),
              f"{killed} processes killed; `ip netns pids {self.network.ns(DOWN)}` is empty")
        two, _ = self.collections
        self.ingest(two, 2, ["CLUSTER-A4", "CLUSTER-A5"])
        self.release("CLUSTER-A2")
        self.release("CLUSTER-B1")
        self.order_a2 = self.order("CLUSTER-A2")
        self.order_b1 = self.order("CLUSTER-B1")
        say("  the other silo's work goes on:")
        self.wait(lambda: all(self.copies(g).get(2) == ("verified", "silo2")
                              for g in ("CLUSTER-A4", "CLUSTER-A5")), "copies 2 on silo2")
        check(True, "CLUSTER-A4, CLUSTER-A5: copy 2 written and verified on silo2")
        self.downloaded(self.order_a2, "CLUSTER-A2")
        [recall] = self.requests("CLUSTER-A2", "recall")
        check(recall.state == "done" and recall.drive.silo.name == "silo2",
              f"CLUSTER-A2 recalled from its silo2 copy (drive {recall.drive}): silo1's "
              f"manager answered no heartbeat for {self.hosts.env['GRANARY_SILO_STALE_S']} s")
        say(f"  the work for silo1 waits (checked again after the drive lease of "
            f"{self.hosts.env['GRANARY_DRIVE_LEASE_S']} s and two beats):")
        time.sleep(int(self.hosts.env["GRANARY_DRIVE_LEASE_S"]) + 20)
        self.waiting_checks()

    def waiting_checks(self):
        from backend.archive.models import ArchiveRequest

        for g in ("CLUSTER-A4", "CLUSTER-A5"):
            migrations = [r for r in self.requests(g, "migrate") if r.copy_number == 1]
            check(len(migrations) == 1 and migrations[0].state == "queued"
                  and self.granule(g).state != "archived",
                  f"{g}: copy 1 (silo1) migration {migrations[0].pk} QUEUED "
                  f"(attempts {migrations[0].attempts}), the granule "
                  f"{self.granule(g).state}, not archived yet", migrations)
        [recall] = self.requests("CLUSTER-B1", "recall")
        check(recall.state == "queued",
              f"CLUSTER-B1 (one copy, on silo1): recall {recall.pk} QUEUED", recall.state)
        check(self.order_b1.state in ("submitted", "staging") and not self.order_b1.downloaded,
              f"order {self.order_b1.order_id} of CLUSTER-B1 '{self.order_b1.state}' "
              "(waiting for tape), not failed", self.order_b1.summary())
        failed = ArchiveRequest.objects.filter(state="failed").count()
        check(failed == 0, "no archive request failed", failed)
        messages, consumers = self.silo_queue("silo1")
        check(consumers == 0 and messages > 0,
              f"broker: archive.silo1 holds {messages} messages (drive nudges, heartbeats), "
              "no consumer")

    def host_back(self):
        say(f"\n== 4. host {DOWN} back")
        self.hosts.start(DOWN)
        self.down.discard(DOWN)
        self.wait(lambda: self.silo_queue("silo1")[1] == 1, "storage manager of silo1 back")
        check(True, "broker: archive.silo1 has its consumer again")
        self.wait(lambda: self.archived("CLUSTER-A4", "CLUSTER-A5"), "the waiting writes")
        for g in ("CLUSTER-A4", "CLUSTER-A5"):
            check(self.copies(g) == {1: ("verified", "silo1"), 2: ("verified", "silo2")},
                  f"{g} ARCHIVED: the waiting copy 1 written and verified on silo1")
        self.downloaded(self.order_b1, "CLUSTER-B1")
        [recall] = self.requests("CLUSTER-B1", "recall")
        check(recall.state == "done" and recall.drive.silo.name == "silo1",
              f"the waiting recall {recall.pk} done on silo1 (drive {recall.drive}, "
              f"attempts {recall.attempts})")

    def nothing_lost(self):
        from backend.archive.invariants import check_all
        from backend.archive.models import ArchiveRequest
        from backend.catalog.models import Granule

        say("\n== 5. nothing lost")
        names = [o.granule_id for o in self.originals().values()]
        states = dict(Granule.objects.filter(granule_id__in=names).values_list(
            "granule_id", "state"))
        check(len(states) == len(names) and set(states.values()) == {"archived"},
              f"all {len(names)} granules the provider delivered are ARCHIVED", states)
        bad = ArchiveRequest.objects.exclude(state="done").values_list("pk", "kind", "state")
        check(not bad, "every archive request is done (none queued, running or failed)",
              list(bad))
        violations = check_all(read_bytes=True)
        check(not violations, "the archive's invariants hold, every copy's bytes read back "
              "against its checksum", [str(v) for v in violations])
