"""Create the demo collections, providers and users (idempotent) and print the logins."""
from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction

from backend.accounts.services import create_user
from backend.archive import operations
from backend.catalog.demo import DEMO_COLLECTIONS, DEMO_PROVIDERS, DEMO_USERS
from backend.catalog.demo_granules import deliver_demo_granules
from backend.catalog.models import Collection


class Command(BaseCommand):
    help = ("Create demo collections, archive hardware (2 silos, 8 drives), a provider, an "
            "operator and a user; deliver demo granules to the archive; print the logins.")

    def add_arguments(self, parser):
        parser.add_argument("--granules", type=int, default=12,
                            help="demo granules per collection (0: none)")

    def handle(self, *args, **opts):
        with transaction.atomic():
            self._catalog_and_users()
        made = 0
        for key in ("MOD021KM.061", "MOD10C1.061", "GHRSST_OISST_L4.2.1"):
            collection = Collection.objects.get_by_key(key)
            made += deliver_demo_granules(collection, settings.STAGING_ROOT / "demo",
                                          opts["granules"])
        if made:
            self.stdout.write(f"{made} demo granules delivered to the archive.")
        self.stdout.write(self._logins)

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
        primary, backup = operations.install_layout()
        for collection in Collection.objects.all():
            if not hasattr(collection, "archive_policy"):
                operations.set_policy(collection, [primary, backup])
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
