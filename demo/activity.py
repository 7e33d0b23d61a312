"""The demo's real operations at seed time (`seed_demo --history`), so the archive, queue,
failure and reconciliation dashboards show true rows, made by the services an operator's
actions go through: the demo granules archived by the movers in this process, ingest failures
with their reasons, a migration that fails, a repack of a demo volume, a drive fault, orders and
a subscription delivered, and a reconciliation run.

Each step looks for what it made before and is skipped when found, so seeding again doubles
nothing."""
import logging
from contextlib import contextmanager
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.test.utils import override_settings
from django.utils import timezone

from backend.accounts import audit, roles
from backend.accounts.models import Provider
from backend.accounts.services import create_user
from backend.archive import operations
from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, Drive, Reconciliation, Volume
from backend.archive.services import reconcile
from backend.archive.services.paths import cache_path
from backend.catalog import checksums
from backend.catalog.models import Collection, Granule
from distribution.models import Destination, Order, Subscription
from distribution.services import deliveries, orders, push, subscriptions
from ingest import services as ingest
from ingest.models import IngestRequest
from ingest.services import periodic, pipeline

from .products import make_granule

FAULTY_DRIVE = ("silo2-d4", "Head errors on three mounts in a row; cleaning cartridge and "
                "service call requested")
CLEANED_DRIVE = ("silo1-d2", "Cleaning cartridge run")
CUSTOMER = "ocean-team"


@contextmanager
def movers_now():
    """The movers write and read at once (no waiting to gather a batch), as the tests do."""
    with override_settings(GRANARY_WRITE_MAX_WAIT_S=0, GRANARY_READ_MAX_WAIT_S=0,
                           GRANARY_REMOUNT_DELAY_S=0, GRANARY_DROP_STABLE_S=0):
        yield


@contextmanager
def _quiet(logger):
    """Silence a logger's errors for a step that fails on purpose (make run's terminal)."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def settle():
    """Run every unfinished ingest request and the movers here until nothing is left to do."""
    with movers_now():
        unfinished = IngestRequest.objects.exclude(state__in=["completed", "failed"])
        for request_id in unfinished.values_list("pk", flat=True):
            pipeline.run_request(request_id)
        archive.run_until_idle()
        periodic.sweep()


def run_all(operator):
    """Every step, in the order an archive lives them; returns what was done, for the log."""
    settle()
    done = [step(operator) for step in (ingest_failures, failed_migration, repack, drive_fault,
                                        deliveries_to_customer, reconciliation)]
    return [line for line in done if line]


def _staged(provider, collection, index, folder_name):
    """A new demo granule's files in the provider's staging area, as a request's specs."""
    area = ingest.staging_area(provider)
    folder = area / "demo" / folder_name
    folder.mkdir(parents=True, exist_ok=True)
    made = make_granule(collection.short_name, index, folder, seed=7)
    specs = []
    for name, role, path in made.files:
        digest, size = checksums.of_file("MD5", path)
        specs.append({"name": name, "path": str(path.relative_to(area)), "role": role,
                      "size": size, "checksum_type": "MD5", "checksum": digest})
    return {"collection": collection.key, "granule_id": made.granule_id,
            "attributes": made.attributes, "files": specs}


def ingest_failures(operator):
    """A delivery of two granules that fail: one declared with a checksum its file does not
    have, one naming a file the provider never staged."""
    provider = Provider.objects.get(name="MODAPS")
    collection = Collection.objects.get_by_key("MOD10C1.061")
    wrong, missing = (_staged(provider, collection, i, "failures") for i in (40, 41))
    wrong["files"][0]["checksum"] = "0" * 32
    missing["files"][0]["path"] = missing["files"][0]["path"] + ".never-staged"
    request, created = ingest.submit(provider, [wrong, missing], label="demo failures",
                                     enqueue=False)
    if not created:
        return ""
    settle()
    return f"ingest request {request.pk} failed its 2 granules, with reasons"


def failed_migration(operator):
    """A granule whose cached file changed after ingest (before it reached tape): its
    migrations fail with the reason, as a disk fault in the cache would make them."""
    provider = Provider.objects.get(name="MODAPS")
    collection = Collection.objects.get_by_key("MOD021KM.061")
    spec = _staged(provider, collection, 42, "damaged")
    request, created = ingest.submit(provider, [spec], label="demo damaged in cache",
                                     enqueue=False)
    if not created:
        return ""
    with movers_now():
        pipeline.run_request(request.pk)
        granule = Granule.objects.get(granule_id=spec["granule_id"])
        data = granule.files.get(role="data")
        with open(cache_path(data), "r+b") as cached:
            first = cached.read(1)
            cached.seek(0)
            cached.write(bytes([first[0] ^ 0xFF]))
        with _quiet("backend.archive"):  # its read-back errors are the point
            archive.run_until_idle()
    return f"the migrations of {granule.granule_id} failed: its cached file was changed"


def repack(operator):
    """Repack the primary volume holding the most, through the movers."""
    if ArchiveRequest.objects.filter(kind=ArchiveRequest.Kind.REPACK).exists():
        return ""
    volume = (Volume.objects.filter(group__name="primary", live_bytes__gt=0)
              .order_by("-live_bytes").first())
    if volume is None:
        return ""
    request = operations.start_repack(volume, requested_by=operator)
    audit.record(operator, "repack", "volume", volume.pk, label=volume.label,
                 reason="Demo: consolidate the first volume", detail={"request": request.pk})
    with movers_now():
        archive.run_until_idle()
    request.refresh_from_db()
    return f"volume {volume.label} repacked: {request.state}"


def drive_fault(operator):
    """One drive varied off for cleaning and back on, one left offline with its fault."""
    if audit.events_for("drive", FAULTY_DRIVE[0]).exists():
        return ""
    for name, reason in (CLEANED_DRIVE, FAULTY_DRIVE):
        drive = Drive.objects.get(name=name)
        operations.vary_drive(drive, False, reason)
        audit.record(operator, "vary_off", "drive", name, label=name, reason=reason)
    operations.vary_drive(Drive.objects.get(name=CLEANED_DRIVE[0]), True)
    audit.record(operator, "vary_on", "drive", CLEANED_DRIVE[0], label=CLEANED_DRIVE[0])
    return f"drive {FAULTY_DRIVE[0]} offline: {FAULTY_DRIVE[1]}"


def deliveries_to_customer(operator):
    """A user (not one of the printed logins, so theirs stay empty) with a push subscription
    to the snow cover and a push order of sea surface temperature, both delivered."""
    if get_user_model().objects.filter(username=CUSTOMER).exists():
        return ""
    user, _, _ = create_user(CUSTOMER, roles.USER)
    inbox = Destination.objects.create(user=user, name="ocean-inbox", path="inbox")
    subscription = Subscription(user=user, name="Daily snow cover", mode=Subscription.Mode.PUSH,
                                destination=inbox)
    subscriptions.save_subscription(subscription, [Collection.objects.get_by_key("MOD10C1.061")])
    deliveries.apply_since(subscription.pk, timezone.now() - timedelta(days=365 * 30))
    sst = Granule.objects.filter(collection__short_name="GHRSST_OISST_L4",
                                 state=Granule.State.ARCHIVED).order_by("pk")[:3]
    order = orders.create_order(user, [g.pk for g in sst], delivery="push", destination=inbox)
    with movers_now():
        for pk in Order.objects.filter(user=user).values_list("pk", flat=True):
            orders.refresh_order(pk)
            archive.run_until_idle()
            orders.refresh_order(pk)
            push.push_order(pk)
    order.refresh_from_db()
    return f"{CUSTOMER}: subscription and order {order.pk} delivered ({order.state})"


def reconciliation(operator):
    """A full reconciliation: every copy and cached file read and checked."""
    if Reconciliation.objects.exists():
        return ""
    run = reconcile.reconcile(full=True, requested_by=operator)
    return f"reconciliation {run.pk}: {run.discrepancies.count()} discrepancies"
