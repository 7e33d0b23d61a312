"""Create the demo collections, providers and users (idempotent) and print the logins."""
from django.core.management.base import BaseCommand
from django.db import transaction

from backend.accounts.services import create_user
from backend.catalog.demo import DEMO_COLLECTIONS, DEMO_PROVIDERS, DEMO_USERS
from backend.catalog.models import Collection


class Command(BaseCommand):
    help = "Create demo collections, a provider, an operator and a user; print their logins."

    @transaction.atomic
    def handle(self, *args, **opts):
        for spec in DEMO_COLLECTIONS:
            fields = dict(spec)
            Collection.objects.update_or_create(
                short_name=fields.pop("short_name"), version=fields.pop("version"), defaults=fields,
            )
        collections_of = {
            p["name"]: [Collection.objects.get_by_key(k) for k in p["collections"]]
            for p in DEMO_PROVIDERS
        }
        self.stdout.write(f"{len(DEMO_COLLECTIONS)} demo collections ready.")
        self.stdout.write("Logins (user / password / API token):")
        for spec in DEMO_USERS:
            provider = spec.get("provider")
            user, password, token = create_user(
                spec["username"], spec["role"], password=spec["password"], provider=provider,
                collections=collections_of.get(provider, ()),
            )
            self.stdout.write(f"  {spec['role']:<9} {user.username:<10} {password:<18} {token}")
