"""Create a user with a role and print the login and API token.

It lives with the catalog, not accounts, because a provider's user is given the collections it
may deliver, and accounts sits below the catalog.
"""
from backend.accounts import roles, services
from backend.catalog.services import collection_by_key
from backend.cli import Command as DomainCommand


class Command(DomainCommand):
    help = "Create (or reset) a user with a role and print the password and API token."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", choices=roles.GROUP_ROLES, default=roles.USER)
        parser.add_argument("--password", help="default: a random one, printed")
        parser.add_argument("--email", default="")
        parser.add_argument("--provider", help="provider name (required for --role provider)")
        parser.add_argument(
            "--collection", action="append", default=[], metavar="SHORT.VER",
            help="a collection the provider may deliver (repeatable)",
        )

    def handle(self, *args, **opts):
        collections = [collection_by_key(key) for key in opts["collection"]]
        user, password, token = services.create_user(
            opts["username"], opts["role"], password=opts["password"], email=opts["email"],
            provider=opts["provider"], collections=collections,
        )
        self.stdout.write(f"user:     {user.username}")
        self.stdout.write(f"role:     {opts['role']}")
        self.stdout.write(f"password: {password}")
        self.stdout.write(f"token:    {token}")
