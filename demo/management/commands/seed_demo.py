"""Create the demo collections, providers and users (idempotent) and print the logins."""
import time

from django.contrib.auth import get_user_model
from django.db import transaction

from backend.accounts.models import Provider
from backend.accounts.services import create_user
from backend.archive import operations
from backend.archive import services as archive
from backend.catalog.models import Collection
from backend.cli import Command as DomainCommand
from demo import activity, history
from demo.definitions import DEMO_COLLECTIONS, DEMO_PROVIDERS, DEMO_USERS
from demo.granules import deliver_demo_granules

# Copy 1 of these collections lives in the object store (copy 2 on tape) when there is one.
IN_OBJECT_STORE = ("GHRSST_OISST_L4",)
DEMO_BUCKET = "granary-archive"


class Command(DomainCommand):
    help = ("Create demo collections, archive hardware (2 silos, 8 drives), a provider, an "
            "operator and a user; deliver demo granules to the archive; print the logins.")

    def add_arguments(self, parser):
        parser.add_argument("--granules", type=int, default=12,
                            help="demo granules per collection (0: none)")
        parser.add_argument("--history", action="store_true",
                            help="also archive the granules here, run the operations that fill "
                            "the dashboards (failures, a repack, a drive fault, deliveries, a "
                            "reconciliation) and record 30 days of synthetic transfers")

    def handle(self, *args, **opts):
        with transaction.atomic():
            self._catalog_and_users()
        made = 0
        for provider in Provider.objects.filter(name__in=[p["name"] for p in DEMO_PROVIDERS]):
            for collection in provider.collections.all():
                request = deliver_demo_granules(provider, collection, opts["granules"])
                made += request.granule_count if request else 0
        if made and not opts["history"]:
            self.stdout.write(f"{made} demo granules submitted for ingest; the worker archives "
                              "them within a minute.")
        if opts["history"]:
            self._history(made)
        self.stdout.write(self._logins)

    def _history(self, made):
        began = time.monotonic()
        operator = get_user_model().objects.get(username="operator")
        for line in activity.run_all(operator):
            self.stdout.write(line)
        transfers = history.seed_history()
        self.stdout.write(
            f"{made} demo granules archived; {transfers} synthetic transfers recorded over the "
            f"last {history.DAYS} days ({time.monotonic() - began:.1f} s).")

    def _bucket(self):
        """The demo's object-store bucket when an object store is configured (make run starts
        one), else None: those collections then keep both copies on tape."""
        if not archive.object_store_configured():
            return None
        try:
            return archive.add_bucket(DEMO_BUCKET, DEMO_BUCKET, create=True)
        except (archive.ArchiveError, OSError) as exc:
            self.stderr.write(f"the object store is not usable ({exc}); all copies go to tape")
        return None

    def _catalog_and_users(self):
        for spec in DEMO_COLLECTIONS:
            fields = dict(spec)
            Collection.objects.update_or_create(
                short_name=fields.pop("short_name"), version=fields.pop("version"), defaults=fields,
            )
        collections_of = {
            p["name"]: [Collection.objects.get_by_key(k) for k in p["collections"]]
            for p in DEMO_PROVIDERS
        }
        for spec in DEMO_PROVIDERS:
            provider, _ = Provider.objects.get_or_create(name=spec["name"],
                                                         defaults={"title": spec["title"]})
            provider.collections.add(*collections_of[spec["name"]])
        primary, backup = operations.install_layout()
        bucket = self._bucket()
        for collection in Collection.objects.all():
            if not hasattr(collection, "archive_policy"):
                first = bucket if bucket and collection.short_name in IN_OBJECT_STORE else primary
                operations.set_policy(collection, [first, backup])
        self.stdout.write(f"{len(DEMO_COLLECTIONS)} demo collections ready.")
        lines = ["Logins (role / user / password / API token):"]
        for spec in DEMO_USERS:
            provider = spec.get("provider")
            user, password, token = create_user(
                spec["username"], spec["role"], password=spec["password"], provider=provider,
                collections=collections_of.get(provider, ()),
            )
            lines.append(f"  {spec['role']:<9} {user.username:<10} {password:<18} {token}")
        self._logins = "\n".join(lines)
