"""The journey through the cluster, from the client host over HTTP: a provider's bulk ingest,
an order recalled from tape and downloaded byte-exact, granules whose copy 1 is an object on the
objects host (read back over S3) and one recalled from there; then one silo's storage manager
host down (its silo's work waits, queued, while the other silo's goes on) and back (the waiting
work completes); then the objects host down (object work waits, queued with the store's reason,
and an order is served from the tape copy) and back (the waiting copy is written). Each check
prints a line; the first that fails raises Failed."""
import hashlib
import time

from bench.chaos.client import Api
from bench.chaos.orders import OrderRun
from bench.chaos.provider import KB, Provider

from .hosts import BUCKET, OBJECTS, S3_BUCKET, SILOS, WEB_PORT, s3_endpoint

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
        self.providers = {key: Provider(self.apis["provider"], None, seed)
                          for seed, key in enumerate(collections, start=1)}
        self.down = set()

    # -- waiting and reading state -----------------------------------------------------------
    def wait(self, predicate, what, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            dead = self.hosts.dead(self.down)
            if dead:
                raise Failed(f"processes exited: {dead}\n" + "\n".join(
                    f"--- {n}\n{self.hosts.tail(n)}" for n in dead))
            time.sleep(0.5)
        raise Failed(f"{what}: not within {timeout} s")

    def originals(self):
        return {o.name: o for p in self.providers.values() for o in p.originals.values()}

    def ingest(self, key, number, names, size=300 * KB):
        provider = self.providers[key]
        rows = [(name, size + i * 7 * KB, True, key) for i, name in enumerate(names)]  # uploaded
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
        """{copy number: (state, silo, or "bucket NAME" for an object copy)} of the granule's
        file (released copies left out)."""
        from backend.archive.models import FileCopy

        return {c.copy_number: (c.state, c.volume.silo.name if c.volume_id else
                                f"bucket {c.bucket.name}")
                for c in FileCopy.objects.filter(file__granule__granule_id=granule_id).exclude(
                    state="released").select_related("volume__silo", "bucket")}

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

    def file_status(self, granule_id):
        """(file id, the operator API's answer on where the granule's one file lives: its
        copies on their media and its archive requests)."""
        from backend.catalog.models import File

        pk = File.objects.get(granule__granule_id=granule_id).pk
        status, answer = self.apis["operator"].call("GET", f"/api/v1/archive/files/{pk}/")
        if status != 200:
            raise Failed(f"GET /api/v1/archive/files/{pk}/ -> {status}: {answer}")
        return pk, answer

    def s3(self):
        """A boto3 client of the objects host's S3 server, with the keys Granary's hosts have."""
        import boto3
        from django.conf import settings

        from bench.s3server import client_config

        store = settings.GRANARY_OBJECT_STORES["default"]
        return boto3.client("s3", endpoint_url=store["endpoint_url"],
                            region_name=store["region"], aws_access_key_id=store["access_key"],
                            aws_secret_access_key=store["secret_key"],
                            config=client_config(connect_timeout=5, retries={"max_attempts": 1}))

    def object_archived(self, granule_id):
        """The granule ARCHIVED with copy 1 an object in the bucket and copy 2 on silo2 (as the
        operator API shows them), the object's bytes read back over S3 hashing to the catalog's
        checksum and the provider's MD5."""
        from backend.catalog.models import File

        pk, status = self.file_status(granule_id)
        copies = {c["copy_number"]: c for c in status["copies"] if c["state"] != "released"}
        one, two = copies.get(1, {}), copies.get(2, {})
        check(self.granule(granule_id).state == "archived" and set(copies) == {1, 2}
              and (one["medium"], one["bucket"], one["state"]) == ("object", BUCKET, "verified")
              and (two["medium"], two["silo"], two["state"]) == ("tape", "silo2", "verified"),
              f"{granule_id} ARCHIVED: copy 1 the object {one.get('key')} in bucket {BUCKET} "
              f"(ETag {one.get('etag')}), copy 2 on {two.get('volume')} (silo2), both verified "
              f"(operator: GET /api/v1/archive/files/{pk}/)", copies)
        f = File.objects.get(pk=pk)
        # a small file goes in a pack with others: its bytes lie at its data offset
        start = one["data_offset"]
        span = {"Range": f"bytes={start}-{start + one['length'] - 1}"} if start else {}
        body = self.s3().get_object(Bucket=S3_BUCKET, Key=one["key"], **span)["Body"].read()
        md5 = hashlib.md5(body).hexdigest()
        want = self.originals()[f.name].md5
        where = f" (bytes {start}- of the pack)" if start else ""
        check(len(body) == f.size and md5 == f.checksum.lower() == want,
              f"boto3 GET s3://{S3_BUCKET}/{one['key']}{where} from {s3_endpoint(self.network)}: "
              f"{len(body)} bytes, MD5 {md5} = the catalog checksum = the provider's",
              f"{len(body)} of {f.size} bytes, MD5 {md5}, catalog {f.checksum}, provider {want}")

    def release(self, granule_id):
        from backend.archive.models import CacheEntry
        from backend.catalog.models import File

        file_ids = list(File.objects.filter(granule__granule_id=granule_id).values_list(
            "pk", flat=True))
        status, answer = self.apis["operator"].call("POST", "/api/v1/archive/cache/release/",
                                                    {"files": file_ids})
        check(status == 200 and not CacheEntry.objects.filter(file_id__in=file_ids).exists(),
              f"operator: cache copy of {granule_id} released, in the archive only now "
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
        self.object_order()
        self.host_down()
        self.host_back()
        self.objects_down()
        self.objects_back()
        self.nothing_lost()

    def show_hosts(self):
        say("\n== 1. hosts (network namespaces on bridge "
            f"{self.network.bridge}, {self.network.cidr})")
        say(f"  db (root namespace) {self.network.gateway}: PostgreSQL, RabbitMQ")
        for host, procs in self.hosts.layout.items():
            what = ", ".join(n for n, _ in procs)
            if host == OBJECTS:
                what += f" (rclone serve s3 on :{s3_endpoint(self.network).rsplit(':', 1)[1]})"
            say(f"  {host:<13} {', '.join(self.network.addresses(host)):<22} {what}")
        say(f"  client        {', '.join(self.network.addresses('client'))}: this journey")
        self.wait(self._web_answers, "web answers the client", timeout=90)
        check(True, f"client reaches web at {self.base} (GET /api/health/ 200)")
        for silo in SILOS:
            self.wait(lambda s=silo: self.silo_queue(s)[1] == 1,
                      f"storage manager of {silo} consumes archive.{silo}", timeout=90)
            check(True, f"broker: queue archive.{silo} has one consumer "
                  f"(the storage manager on sm-{silo})")
        buckets = [b["Name"] for b in self.s3().list_buckets()["Buckets"]]
        check(S3_BUCKET in buckets, f"client reaches the object store at "
              f"{s3_endpoint(self.network)} (boto3 list_buckets: {', '.join(buckets)}; made by "
              f"the set-up's add_bucket({BUCKET!r}, {S3_BUCKET!r}, create=True))", buckets)

    def _web_answers(self):
        try:
            return self.apis["user"].live.call("GET", "/api/health/", timeout=5)[0] == 200
        except OSError:
            return False

    def tape_order(self):
        two, one, objects = self.collections
        say("\n== 2. ingest, then an order recalled from tape")
        self.ingest(two, 1, ["CLUSTER-A1", "CLUSTER-A2", "CLUSTER-A3"])
        self.ingest(one, 1, ["CLUSTER-B1"])
        self.ingest(objects, 1, ["CLUSTER-O1", "CLUSTER-O2"])
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

    def object_order(self):
        *_, objects = self.collections
        say(f"\n== 3. the object store: copy 1 of {objects} in bucket {BUCKET} on host "
            f"{OBJECTS}, copy 2 on tape (silo2)")
        self.wait(lambda: self.archived("CLUSTER-O1", "CLUSTER-O2"), "the object granules")
        for g in ("CLUSTER-O1", "CLUSTER-O2"):
            self.object_archived(g)
        log = self.hosts.tail("worker-archive", 10**7)
        check("Task backend.archive.run_objects[" in log,
              "worker-archive's log shows the object movers ran there (run_objects tasks, "
              "queue archive, no drive)")
        self.release("CLUSTER-O1")
        order = self.order("CLUSTER-O1")
        self.downloaded(order, "CLUSTER-O1")
        pk, status = self.file_status("CLUSTER-O1")
        recalls = [r for r in status["requests"] if r["kind"] == "recall"]
        check(len(recalls) == 1 and recalls[0]["state"] == "done"
              and recalls[0]["bucket"] == BUCKET and recalls[0]["drive"] is None,
              f"the file came back from the object store: recall request "
              f"{recalls[0]['id'] if recalls else '-'} done from bucket "
              f"{recalls[0]['bucket'] if recalls else '-'}, no drive, no tape mount "
              f"(GET /api/v1/archive/files/{pk}/)", recalls)

    def host_down(self):
        say(f"\n== 4. host {DOWN} down (every process in its namespace killed -9)")
        killed = self.hosts.kill(DOWN)
        self.down.add(DOWN)
        check(killed > 0 and not self.network.pids(DOWN),
              f"{killed} processes killed; `ip netns pids {self.network.ns(DOWN)}` is empty")
        two, *_ = self.collections
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
        say(f"\n== 5. host {DOWN} back")
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

    def objects_down(self):
        say(f"\n== 6. host {OBJECTS} down (the S3 server killed -9)")
        killed = self.hosts.kill(OBJECTS)
        self.down.add(OBJECTS)
        check(killed > 0 and not self.network.pids(OBJECTS) and not self.hosts.objects_answer(),
              f"{killed} process{'es' if killed > 1 else ''} killed; `ip netns pids "
              f"{self.network.ns(OBJECTS)}` is empty and nothing answers at "
              f"{s3_endpoint(self.network)}")
        *_, objects = self.collections
        self.ingest(objects, 2, ["CLUSTER-O3"])
        self.release("CLUSTER-O2")
        order = self.order("CLUSTER-O2")
        reasons = self._watch_recall(order, "CLUSTER-O2")
        self.downloaded(order, "CLUSTER-O2")
        pk, status = self.file_status("CLUSTER-O2")
        recalls = [r for r in status["requests"] if r["kind"] == "recall"]
        seen = f"; on its way it read {reasons[0]!r}" if reasons else ""
        check(len(recalls) == 1 and recalls[0]["state"] == "done"
              and recalls[0]["bucket"] is None
              and (recalls[0]["drive"] or "").startswith("silo2"),
              f"CLUSTER-O2 served from its tape copy: recall request "
              f"{recalls[0]['id'] if recalls else '-'} done on drive "
              f"{recalls[0]['drive'] if recalls else '-'} (silo2), not from the bucket "
              f"(GET /api/v1/archive/files/{pk}/){seen}", recalls)
        say("  the object work waits, queued with the store's reason:")
        self.wait(lambda: self._object_migration_waits("CLUSTER-O3")
                  and self.copies("CLUSTER-O3").get(2) == ("verified", "silo2"),
                  "CLUSTER-O3's copy 1 queued as unreachable, its copy 2 on silo2", timeout=120)
        check(True, "CLUSTER-O3: copy 2 written and verified on silo2")
        time.sleep(12)  # another tick: the movers try again, and still spend no attempt
        self.object_waiting_checks()

    def _watch_recall(self, order, granule_id, timeout=300):
        """The reasons the granule's recall carried while the order ran (a recall sent from
        the bucket to tape says why: shown when seen, the tape read may clear it at once)."""
        reasons, deadline = [], time.monotonic() + timeout
        while order.is_alive() and time.monotonic() < deadline:
            for r in self.requests(granule_id, "recall"):
                if r.error and r.error not in reasons:
                    reasons.append(r.error)
            time.sleep(0.2)
        return [_upto(r, "unreachable") for r in reasons if "unreachable" in r]

    def _object_migration_waits(self, granule_id):
        migrations = [r for r in self.requests(granule_id, "migrate") if r.copy_number == 1]
        return (len(migrations) == 1 and migrations[0].state == "queued"
                and "unreachable" in migrations[0].error)

    def object_waiting_checks(self):
        from backend.archive.models import ArchiveRequest

        pk, status = self.file_status("CLUSTER-O3")
        migrations = [r for r in status["requests"]
                      if r["kind"] == "migrate" and r["copy_number"] == 1]
        state = self.granule("CLUSTER-O3").state
        check(len(migrations) == 1 and migrations[0]["state"] == "queued"
              and migrations[0]["bucket"] == BUCKET and migrations[0]["attempts"] == 0
              and "unreachable" in migrations[0]["error"] and state == "archiving",
              f"CLUSTER-O3 {state.upper()}: copy 1 (bucket {BUCKET}) migration "
              f"{migrations[0]['id'] if migrations else '-'} QUEUED, attempts "
              f"{migrations[0]['attempts'] if migrations else '-'}, error "
              f"{_upto(migrations[0]['error'], 'unreachable') if migrations else '-'!r} "
              f"(GET /api/v1/archive/files/{pk}/)", (state, migrations))
        failed = ArchiveRequest.objects.filter(state="failed").count()
        check(failed == 0, "no archive request failed", failed)

    def objects_back(self):
        say(f"\n== 7. host {OBJECTS} back (the S3 server started again, same folder and keys)")
        self.hosts.start_objects()
        self.down.discard(OBJECTS)
        check(True, f"the S3 server answers at {s3_endpoint(self.network)} again")
        self.wait(lambda: self.archived("CLUSTER-O3"), "the waiting object copy", timeout=120)
        [migration] = [r for r in self.requests("CLUSTER-O3", "migrate") if r.copy_number == 1]
        check(migration.state == "done",
              f"the waiting migration {migration.pk} done (attempts {migration.attempts})",
              migration.state)
        self.object_archived("CLUSTER-O3")

    def nothing_lost(self):
        from backend.archive.invariants import Tally, check_all
        from backend.archive.models import ArchiveRequest, Bucket, FileCopy
        from backend.catalog.models import Granule

        say("\n== 8. nothing lost")
        names = [o.granule_id for o in self.originals().values()]
        states = dict(Granule.objects.filter(granule_id__in=names).values_list(
            "granule_id", "state"))
        check(len(states) == len(names) and set(states.values()) == {"archived"},
              f"all {len(names)} granules the provider delivered are ARCHIVED", states)
        bad = ArchiveRequest.objects.exclude(state="done").values_list("pk", "kind", "state")
        check(not bad, "every archive request is done (none queued, running or failed)",
              list(bad))
        tally = Tally()
        violations = check_all(read_bytes=True, tally=tally)
        verified = FileCopy.objects.filter(state="verified")
        objects = verified.filter(bucket__isnull=False).count()
        buckets = list(Bucket.objects.values_list("name", flat=True))
        check(not violations and buckets == [BUCKET] and tally.copies == verified.count(),
              f"the archive's invariants hold, every copy's bytes read back against its "
              f"checksum: {tally.copies} copies ({objects} of them objects, bucket {BUCKET} "
              f"listed against the catalog over S3: none missing, none orphan), "
              f"{tally.volumes} volumes, {tally.cache_files} cached files",
              [str(v) for v in violations] or (buckets, tally, verified.count()))


def _upto(text, word):
    """The text up to the end of `word`, "..." for the rest."""
    end = text.find(word) + len(word)
    return text if end < len(word) or end >= len(text) else text[:end] + "..."
