"""The archive as a whole, under random sequences of work and damage (a stateful property test).

Each step is an operator's or the world's action: ingest (small files, and files that span
volumes), drive vary off/on, drive write and read faults, a byte flipped on a volume, a
truncated volume, a volume file lost, repack, release, a recall for an order, an audit, cache
pressure, a mover that dies holding work, subscriptions created and deleted while the granules
the archive just finished are matched. After each step the archive runs until it is quiet and
every promise is checked from first principles: the expected bytes are the MD5s of the
originals this test generated, read back from the volume files and the cache by this test, and
each subscription holds one delivery for every granule matched while it existed (and none once
it is deleted), its standing order every delivered file, ready.

Damage is dealt the way the world deals it, one piece at a time: a step never damages the
last good copy of a file (no archive can repair that), and after damage an operator's audit of
the volume or a full reconciliation finds it.

`make test` runs a bounded number of examples with a fixed seed; GRANARY_STATEFUL_EXAMPLES
(and GRANARY_STATEFUL_STEPS) run it longer.
"""
import hashlib
import os
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from backend.accounts import roles
from backend.accounts.services import create_user
from backend.archive import operations, services, tape
from backend.archive.invariants import check_all
from backend.archive.models import (
    ArchiveRequest,
    Bucket,
    CacheEntry,
    Drive,
    FileCopy,
    Volume,
    VolumeGroup,
)
from backend.archive.services import buckets, cache, manager, paths, writing
from backend.archive.services.completeness import file_copies_complete
from backend.archive.services.policy import ArchiveError
from backend.archive.services.reconcile import reconcile
from backend.catalog.models import Collection, File, Granule
from distribution.models import (
    Order,
    OrderItem,
    StageFile,
    StageRequest,
    Subscription,
    SubscriptionDelivery,
)
from distribution.services import deliveries, orders, staging, staging_progress, subscriptions
from tests.archive_fixtures import archived_collection, small_layout, staged_granule
from tests.s3_fixtures import copy_bytes
from tests.s3_server import ACCESS_KEY, SECRET_KEY

pytestmark = pytest.mark.django_db

Req = ArchiveRequest
TINY_MEDIA = {"name": "tiny-media", "rate_mb_s": 100, "mount_s_min": 1, "mount_s_max": 2,
              "unmount_s": 1, "position_s_per_gb": 1, "capacity_bytes": 4 << 20}
SMALL, BIG = (2_000, 200_000), (5 << 20, 6 << 20)
MAX_BYTES = 40 << 20          # what one example ingests at most: the volumes must hold it twice
ACTIVE = [Req.State.QUEUED, Req.State.RUNNING]


def _wipe():
    """Each example starts from an empty archive (the test's transaction holds them all)."""
    for model in (Order, Subscription, StageRequest, ArchiveRequest, CacheEntry, FileCopy, Drive):
        model.objects.all().delete()
    Granule.objects.all().delete()
    Collection.objects.all().delete()
    from backend.archive.models import ArchivePolicy, PolicyCopy

    PolicyCopy.objects.all().delete()
    ArchivePolicy.objects.all().delete()
    Bucket.objects.all().delete()
    Volume.objects.all().delete()
    VolumeGroup.objects.all().delete()


def _path(f):
    return f"/{f.granule.collection.key}/{f.granule.granule_id}/{f.name}"


def _md5_of_copy(segments, s3=None):
    """The MD5 of a copy's bytes read straight from where it lies: the volume files, or the
    object through the S3 server (not through Granary's own reader)."""
    digest = hashlib.md5()
    for s in sorted(segments, key=lambda s: s.file_offset):
        if s.bucket_id:
            digest.update(copy_bytes(s3, s))
            continue
        with open(paths.volume_path(s.volume), "rb") as volume:
            volume.seek(s.data_offset)
            digest.update(volume.read(s.length))
    return digest.hexdigest()


class Archive(RuleBasedStateMachine):
    # With an S3 server (set by the test), copy 1 lives in a bucket of it and copy 2 on tape.
    s3_server = None
    examples = 0
    removals = []   # objects whose copies the work released: removed once it commits

    def __init__(self):
        super().__init__()
        _wipe()
        self.removals.clear()
        self.root = Path(tempfile.mkdtemp(prefix="granary-stateful-"))
        stores = {}
        if self.s3_server is not None:
            stores = {"GRANARY_OBJECT_STORES": {"default": {
                "endpoint_url": self.s3_server.endpoint_url, "access_key": ACCESS_KEY,
                "secret_key": SECRET_KEY, "region": "us-east-1"}}}
        self.overrides = override_settings(
            DATA_ROOT=self.root, **stores, **{f"{n.upper()}_ROOT": self.root / n
                                              for n in ("staging", "cache", "volumes", "outbox")})
        self.overrides.enable()
        for name in ("staging", "cache", "volumes", "outbox"):
            (self.root / name).mkdir()
        self.primary, self.backup, _ = small_layout(volumes_per_silo=24, drives_per_silo=2,
                                                    media=TINY_MEDIA)
        self.bucket = self.s3 = None
        if self.s3_server is not None:
            Archive.examples += 1
            name = f"stateful-{os.getpid()}-{Archive.examples}"
            self.s3 = self.s3_server.client()
            self.s3.create_bucket(Bucket=name)
            self.bucket = Bucket.objects.create(name="objects", bucket=name)
        self.targets = {1: self.bucket or self.primary, 2: self.backup}
        self.collection = archived_collection([self.targets[1], self.targets[2]])
        self.originals, self.waiting, self.ingested, self.damaged = {}, [], 0, False
        self.subscriber = create_user("subscriber", roles.USER)[0]
        # what the subscriptions promise: {subscription id: granules matched while it existed}
        self.owed, self.matched, self.made = {}, set(), 0
        self.late = {}   # {subscription id: granule being matched when it was created}

    def teardown(self):
        self.overrides.disable()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- the world's and the operator's actions -------------------------------------------------

    @precondition(lambda self: self.ingested < MAX_BYTES)
    @rule(count=st.integers(1, 3), big=st.booleans(), data=st.data())
    def ingest(self, count, big, data):
        for _ in range(count):
            size = data.draw(st.integers(*(BIG if big else SMALL)))
            granule, sources = staged_granule(self.collection, self.root / "staging",
                                              sizes=(size,))
            for pk, path in sources.items():
                self.originals[pk] = hashlib.md5(path.read_bytes()).hexdigest()
            self.ingested += size
            self.waiting.append((granule, sources))
        self._admit()

    @rule(data=st.data())
    def vary_a_drive_off(self, data):
        online = list(Drive.objects.exclude(state=Drive.State.OFFLINE).order_by("name"))
        if len(online) > 2:
            drive = data.draw(st.sampled_from(online))
            operations.vary_drive(drive, online=False, reason="maintenance")

    @rule()
    def vary_every_drive_on(self):
        for drive in Drive.objects.filter(state=Drive.State.OFFLINE):
            operations.vary_drive(drive, online=True)

    @rule(data=st.data(), operation=st.sampled_from(["write", "read", "mount"]),
          after=st.integers(0, 2))
    def drive_fault(self, data, operation, after):
        drive = data.draw(st.sampled_from(list(Drive.objects.order_by("name"))))
        Drive.objects.filter(pk=drive.pk).update(fault={operation: after})

    @rule()
    def clear_drive_faults(self):
        Drive.objects.update(fault={})

    @rule(data=st.data())
    def flip_a_byte_on_tape(self, data):
        copy = self._damageable(data)
        if copy is not None:
            offset = copy.data_offset + data.draw(st.integers(0, copy.length - 1))
            with open(paths.volume_path(copy.volume), "r+b") as volume:
                volume.seek(offset)
                byte = volume.read(1)
                volume.seek(offset)
                volume.write(bytes([byte[0] ^ 0x5A]))
            operations.start_audit(copy.volume)

    @rule(data=st.data())
    def truncate_a_volume(self, data):
        copy = self._damageable(data)
        if copy is not None and self._others_intact(copy.volume, copy.data_offset):
            os.truncate(paths.volume_path(copy.volume), copy.data_offset + copy.length // 2)
            self.damaged = True                   # found by the next reconciliation

    @rule(data=st.data())
    def lose_a_volume_file(self, data):
        copy = self._damageable(data)
        if copy is not None and self._others_intact(copy.volume, 0):
            os.unlink(paths.volume_path(copy.volume))
            self.damaged = True

    @precondition(lambda self: self.bucket is not None)
    @rule(data=st.data(), how=st.sampled_from(["replace", "delete"]))
    def damage_an_object_behind_our_back(self, data, how):
        """An object's bytes replaced, or the object deleted, on the server itself."""
        copies = list(FileCopy.objects.filter(state=FileCopy.State.VERIFIED, bucket=self.bucket)
                      .select_related("file").order_by("pk"))
        if not copies:
            return
        copy = data.draw(st.sampled_from(copies))
        on_tape = FileCopy.objects.filter(file_id=copy.file_id, state=FileCopy.State.VERIFIED,
                                          volume__isnull=False)
        if sum(s.length for s in on_tape) < copy.file.size:
            return   # never the last good copy
        if how == "replace":
            self.s3.put_object(Bucket=self.bucket.bucket, Key=copy.key,
                               Body=os.urandom(copy.length))
        else:
            self.s3.delete_object(Bucket=self.bucket.bucket, Key=copy.key)
        self.damaged = True                       # found by the next reconciliation

    @precondition(lambda self: self.bucket is not None)
    @rule()
    def the_object_store_goes_away_for_a_while(self):
        """The store is unreachable while work arrives and the archive runs: nothing fails,
        nothing is lost; the work waits with the reason and ends once the store is back."""
        dead = {"default": {"endpoint_url": "http://127.0.0.1:9", "access_key": ACCESS_KEY,
                            "secret_key": SECRET_KEY, "region": "us-east-1"}}
        with override_settings(GRANARY_OBJECT_STORES=dead, GRANARY_S3_TIMEOUT_S=0.5):
            self._admit()
            services.run_until_idle()
            assert not Req.objects.filter(state=Req.State.FAILED).exists()
            waiting = Req.objects.filter(state=Req.State.QUEUED, bucket=self.bucket)
            assert all("unreachable" in r.error for r in waiting if r.error), [
                r.error for r in waiting]

    @rule(data=st.data())
    def repack(self, data):
        volumes = list(Volume.objects.filter(state__in=["filling", "full"]).order_by("label"))
        if volumes:
            operations.start_repack(data.draw(st.sampled_from(volumes)))

    @rule(data=st.data())
    def release(self, data):
        clean = list(CacheEntry.objects.filter(state=CacheEntry.State.CLEAN).order_by("pk"))
        if clean:
            entry = data.draw(st.sampled_from(clean))
            try:
                cache.release(entry.file)
            except ArchiveError:      # refused only for a file a standing order keeps ready
                assert entry.keep_until and entry.keep_until > timezone.now(), entry

    @rule(data=st.data())
    def recall_for_an_order(self, data):
        files = list(File.objects.filter(granule__state=Granule.State.ARCHIVED).order_by("pk"))
        if files:
            f = data.draw(st.sampled_from(files))
            services.make_available([f])

    @rule(data=st.data())
    def audit(self, data):
        volumes = list(Volume.objects.filter(state__in=["filling", "full"]).order_by("label"))
        if volumes:
            operations.start_audit(data.draw(st.sampled_from(volumes)))

    @rule(fraction=st.floats(0.05, 0.5))
    def cache_pressure(self, fraction):
        usage = cache.cache_usage()
        with override_settings(GRANARY_CACHE_BYTES=max(1, int(usage.used * fraction))):
            cache.purge()

    @rule(data=st.data())
    def a_mover_dies_holding_work(self, data):
        objects = list(Req.objects.filter(state=Req.State.QUEUED, bucket__isnull=False)
                       .order_by("pk")[:5])
        if objects:   # an object mover killed: its lease runs out
            Req.objects.filter(pk__in=[r.pk for r in objects]).update(
                state=Req.State.RUNNING, lease_until=timezone.now())
        queued = list(Req.objects.filter(state=Req.State.QUEUED, kind__in=["migrate", "recall"],
                                         bucket__isnull=True).order_by("pk")[:5])
        drives = list(Drive.objects.exclude(state=Drive.State.OFFLINE).order_by("name"))
        if objects and not (queued and drives):
            manager.recover_stale_work()
        if queued and drives:
            drive = data.draw(st.sampled_from(drives))
            Req.objects.filter(pk__in=[r.pk for r in queued]).update(
                state=Req.State.RUNNING, drive=drive)
            Drive.objects.filter(pk=drive.pk).update(lease_owner="dead-mover", lease_until=None)
            manager.recover_stale_work()          # the beat's next tick

    @initialize(mode=st.sampled_from([Subscription.Mode.NOTIFY, Subscription.Mode.ORDER]),
                data=st.data())
    def a_user_subscribes_and_the_first_granules_arrive(self, mode, data):
        """Every example starts with something to match, damage and recall."""
        self._subscribe(mode)
        self.ingest(2, False, data)

    @rule(mode=st.sampled_from([Subscription.Mode.NOTIFY, Subscription.Mode.ORDER]))
    def subscribe(self, mode):
        self._subscribe(mode)

    @rule(data=st.data())
    def unsubscribe(self, data):
        if self.owed:
            self._unsubscribe(data.draw(st.sampled_from(sorted(self.owed))))

    @rule(data=st.data())
    def apply_a_subscription(self, data):
        """The user's "deliver what was archived before": every archived granule is owed."""
        if self.owed:
            pk = data.draw(st.sampled_from(sorted(self.owed)))
            deliveries.apply_since(pk, self.collection.created_at)
            self.owed[pk] |= set(Granule.objects.filter(
                state=Granule.State.ARCHIVED).values_list("pk", flat=True))

    @rule(data=st.data(), after=st.integers(0, 4),
          change=st.sampled_from(["create", "delete", "delete the one delivered"]))
    def subscriptions_change_while_matching(self, data, after, change):
        """The worker matching a batch meets a subscription created or deleted mid-way (the
        one it is delivering to, even)."""
        real, seen = deliveries.deliver, []

        def deliver(delivery_id):
            row = SubscriptionDelivery.objects.filter(pk=delivery_id).first()
            if len(seen) == after and row is not None:
                if change == "create":
                    self._subscribe(Subscription.Mode.NOTIFY, during=row.granule_id)
                elif change == "delete" and self.owed:
                    self._unsubscribe(data.draw(st.sampled_from(sorted(self.owed))))
                elif change == "delete the one delivered":
                    self._unsubscribe(row.subscription_id)
            seen.append(delivery_id)
            return real(delivery_id)

        deliveries.deliver = deliver
        try:
            self._match()
        finally:
            deliveries.deliver = real

    @rule(data=st.data(), lifetime=st.sampled_from([0, 3600]))
    def a_grid_client_stages_files(self, data, lifetime):
        files = list(File.objects.filter(granule__state=Granule.State.ARCHIVED)
                     .select_related("granule__collection").order_by("pk"))
        if files:
            chosen = data.draw(st.lists(st.sampled_from(files), min_size=1, max_size=3,
                                        unique=True))
            stage = staging.create_stage(self.subscriber, {"files": [
                {"path": _path(f), "diskLifetime": lifetime} for f in chosen]})
            staging_progress.refresh_stage(stage.pk)   # the message sent on commit

    @rule(data=st.data(), how=st.sampled_from(["release", "delete", "its bound passes"]))
    def a_stage_request_ends(self, data, how):
        stages = list(StageRequest.objects.order_by("created_at", "pk"))
        if not stages:
            return
        stage = data.draw(st.sampled_from(stages))
        if how == "release":
            staging.release_files(self.subscriber, str(stage.pk), {
                "paths": list(stage.files.values_list("path", flat=True))})
        elif how == "delete":
            staging.delete_stage(self.subscriber, str(stage.pk))
        else:
            StageRequest.objects.filter(pk=stage.pk).update(
                bound_at=timezone.now() - timedelta(seconds=1))
            staging_progress.refresh_stage(stage.pk)

    # -- after every step: run until quiet, then check every promise ----------------------------

    def _commit_removals(self):
        """What the commits of the work just done would do with the objects whose copies they
        released (their on-commit removal never fires inside the test's transaction)."""
        places, self.removals[:] = list(self.removals), []
        buckets.delete_objects(places)

    def _admit(self):
        still = []
        for granule, sources in self.waiting:
            if not services.archive_granule(granule, sources).admitted:
                still.append((granule, sources))
        self.waiting = still

    def _settle(self):
        for _ in range(60):
            self._admit()
            services.run_until_idle()
            self._commit_removals()
            staging_progress.sweep_stages()   # the beat's sweep: recalls asked again, bounds
            self._match()
            self._refresh_standing_orders()
            if self.damaged:   # the operator's reconciliation, reading the volumes
                reconcile(full=True, repair=True)
                self.damaged = False
                continue
            if not Req.objects.filter(state__in=ACTIVE).exists() and not self.waiting:
                return
            # work only offline drives can do waits for the operator to vary them on
            if not Drive.objects.exclude(state=Drive.State.OFFLINE).exists() or \
                    Req.objects.filter(state=Req.State.QUEUED).exists():
                self.vary_every_drive_on()
                self.clear_drive_faults()
        raise AssertionError("the archive did not settle: " + ", ".join(
            f"{r.kind} {r.state} {r.error}" for r in Req.objects.filter(state__in=ACTIVE)[:5]))

    @invariant()
    def every_promise_holds(self):
        self._settle()
        failed = list(Req.objects.filter(state=Req.State.FAILED).values_list("kind", "error"))
        assert not failed, failed
        copies = {}
        for c in FileCopy.objects.exclude(state=FileCopy.State.RELEASED).select_related(
                "volume__group", "bucket"):
            copies.setdefault((c.file_id, c.copy_number), []).append(c)
        for f in File.objects.select_related("granule"):
            assert f.granule.state == Granule.State.ARCHIVED, f
            assert file_copies_complete(f)
            for number, target in self.targets.items():
                segments = copies.get((f.pk, number), [])
                assert segments and all(s.state == FileCopy.State.VERIFIED for s in segments), (
                    f, number, [(s.where, s.state) for s in segments])
                assert {s.volume.group if s.volume_id else s.bucket for s in segments} == {
                    target}
                assert sum(s.length for s in segments) == f.size
                assert _md5_of_copy(segments, self.s3) == self.originals[f.pk]
        if self.bucket is not None:   # nothing in the bucket that no copy names
            listed = self.s3.list_objects_v2(Bucket=self.bucket.bucket).get("Contents", [])
            assert {o["Key"] for o in listed} == {
                s.key for segments in copies.values() for s in segments if s.bucket_id}
        self._volumes_add_up()
        self._cache_holds_what_it_says()
        self._subscriptions_keep_their_promises()
        self._stages_keep_their_promises()
        assert [v.message for v in check_all(read_bytes=True)] == []

    def _volumes_add_up(self):
        for volume in Volume.objects.all():
            live = list(FileCopy.objects.filter(volume=volume, state=FileCopy.State.VERIFIED))
            assert volume.live_bytes == sum(c.length for c in live), volume
            assert volume.file_count == len(live), volume
            if live:
                on_tape = {m.position for m in tape.scan(paths.volume_path(volume))}
                assert {c.position for c in live} <= on_tape, volume
        for repack in Req.objects.filter(kind=Req.Kind.REPACK, state=Req.State.DONE):
            assert not FileCopy.objects.filter(volume_id=repack.volume_id,
                                               created_at__lt=repack.created_at,
                                               state=FileCopy.State.VERIFIED).exists()

    def _stages_keep_their_promises(self):
        """Every stage file ends staged or failed; one staged and not released stays in the
        cache for its lifetime (the keep the check of stage lifetimes judges from the other
        side: none is left once released)."""
        now = timezone.now()
        assert not StageFile.objects.filter(state__in=StageFile.LIVE).exists()
        kept = dict(CacheEntry.objects.values_list("file_id", "keep_until"))
        for f in StageFile.objects.filter(state=StageFile.State.COMPLETED, released=False,
                                          disk_lifetime_s__gt=0, kept_until__gt=now):
            assert f.file_id in kept and kept[f.file_id] >= f.kept_until, f

    def _cache_holds_what_it_says(self):
        for entry in CacheEntry.objects.select_related("file"):
            assert entry.state != CacheEntry.State.DIRTY, entry
            path = services.cache_path(entry.file)
            assert hashlib.md5(path.read_bytes()).hexdigest() == self.originals[entry.file_id]

    # -- subscriptions ---------------------------------------------------------------------------

    def _subscribe(self, mode, during=None):
        self.made += 1
        sub = subscriptions.save_subscription(
            Subscription(user=self.subscriber, name=f"sub-{self.made}", mode=mode),
            [self.collection])
        self.owed[sub.pk] = set()
        if during is not None:   # created while the worker matches: later granules are owed
            self.late[sub.pk] = during

    def _unsubscribe(self, pk):
        sub = Subscription.objects.filter(pk=pk).first()
        if sub is not None:
            subscriptions.delete_subscription(sub)
        self.owed.pop(pk, None)

    def _match(self):
        """What the worker does with the archive's granules_archived messages (their on-commit
        send never fires inside the test's transaction): match the newly archived granules."""
        new = sorted(set(Granule.objects.filter(state=Granule.State.ARCHIVED)
                         .values_list("pk", flat=True)) - self.matched)
        for pk in new:
            for sub, owed in self.owed.items():
                created_during = self.late.get(sub)
                if created_during is None or pk > created_during:
                    owed.add(pk)
            deliveries.match_granules([pk])
            self.matched.add(pk)
        self.late = {}

    def _refresh_standing_orders(self):
        """The refreshes the recalls' on-commit nudges would queue."""
        for order in Order.objects.filter(subscription__isnull=False).exclude(
                state__in=Order.FINAL).order_by("pk"):
            orders.refresh_order(order.pk)

    def _subscriptions_keep_their_promises(self):
        rows = set(SubscriptionDelivery.objects.values_list("subscription_id", "granule_id"))
        assert SubscriptionDelivery.objects.count() == len(rows)        # once each
        assert {s for s, _ in rows} <= set(self.owed)                   # none for a deleted one
        assert set(Subscription.objects.values_list("pk", flat=True)) == set(self.owed)
        assert not SubscriptionDelivery.objects.exclude(
            state=SubscriptionDelivery.State.DELIVERED).exists()
        archived = set(Granule.objects.filter(state=Granule.State.ARCHIVED)
                       .values_list("pk", flat=True))
        for sub in Subscription.objects.all():
            got = {g for s, g in rows if s == sub.pk}
            assert self.owed[sub.pk] <= got <= archived, (sub, self.owed[sub.pk] - got)
            if sub.mode == Subscription.Mode.ORDER and got:
                items = OrderItem.objects.filter(order__subscription=sub)
                assert set(items.values_list("file_id", flat=True)) == set(
                    File.objects.filter(granule__in=got).values_list("pk", flat=True))
                assert not items.exclude(state=OrderItem.State.READY).exists()

    # -- helpers -----------------------------------------------------------------------------

    def _damageable(self, data):
        """A verified copy segment whose file's other copy is whole and good: damaging it
        leaves a good copy to repair from."""
        candidates = list(FileCopy.objects.filter(state=FileCopy.State.VERIFIED,
                                                  volume__isnull=False)
                          .select_related("volume").order_by("pk"))
        if not candidates:
            return None
        copy = data.draw(st.sampled_from(candidates))
        return copy if self._others_intact(copy.volume, copy.data_offset) else None

    def _others_intact(self, volume, from_offset):
        """Every copy on `volume` at or past `from_offset` has another good copy elsewhere."""
        for c in FileCopy.objects.filter(volume=volume, state=FileCopy.State.VERIFIED,
                                         data_offset__gte=from_offset):
            other = FileCopy.objects.filter(file_id=c.file_id, state=FileCopy.State.VERIFIED) \
                .exclude(copy_number=c.copy_number).exclude(volume=volume)
            if sum(s.length for s in other) < c.file.size:
                return False
        return True


EXAMPLES = int(os.environ.get("GRANARY_STATEFUL_EXAMPLES", "6"))
STEPS = int(os.environ.get("GRANARY_STATEFUL_STEPS", "12"))


@pytest.fixture(params=["tape", "object store and tape"])
def media(request):
    """Both copies on tape; or copy 1 in a bucket of a real S3 server, copy 2 on tape."""
    if request.param == "tape":
        yield None
        return
    Archive.s3_server = request.getfixturevalue("s3_server")
    yield Archive.s3_server
    Archive.s3_server = None


@pytest.mark.once
def test_the_archive_keeps_every_promise_under_random_work_and_damage(monkeypatch, media):
    monkeypatch.setattr(writing, "SPAN_MIN", 64 << 10)   # files span the tiny volumes
    monkeypatch.setattr(manager, "SPAN_MIN", 64 << 10)
    monkeypatch.setattr(buckets, "remove_on_commit", Archive.removals.extend)
    with override_settings(GRANARY_CACHE_BYTES=1 << 30, GRANARY_WRITE_MAX_WAIT_S=0,
                           GRANARY_READ_MAX_WAIT_S=0, GRANARY_REMOUNT_DELAY_S=0,
                           GRANARY_DRIVE_ERROR_LIMIT=2):
        Archive.TestCase.settings = settings(
            max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
            derandomize=EXAMPLES <= 20, database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        from hypothesis.stateful import run_state_machine_as_test

        run_state_machine_as_test(Archive, settings=Archive.TestCase.settings)
