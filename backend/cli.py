"""The command line's base: a service's refusal becomes the command's error message here, once."""
from django.core.management.base import BaseCommand, CommandError

from backend.errors import DomainError


class Command(BaseCommand):
    """A management command whose services' DomainErrors exit with their sentence (status 1)."""

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except DomainError as exc:
            raise CommandError(exc.detail) from exc
