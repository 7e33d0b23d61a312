"""`manage.py chaos`: Granary under fire on its own PostgreSQL and RabbitMQ (see bench/chaos/).

Prints a table, writes JSON with --json, and exits non-zero unless nothing was lost, stuck,
done twice or served corrupt, and reconciliation found nothing left to repair."""
from django.core.management.base import CommandError

from backend.cli import Command as DomainCommand
from bench.chaos import main, report


class Command(DomainCommand):
    help = ("Ingest granules while processes are killed, the broker and database restarted, "
            "drives fail and bytes are damaged; then check nothing was lost")

    def add_arguments(self, parser):
        main.add_arguments(parser)

    def handle(self, *args, **opts):
        opts = main.options_of(opts)
        if opts["inner"]:
            return main.inner(opts)
        result = main.outer(opts, self.stdout.write)
        if result is None:
            raise CommandError("the chaos run did not finish (see the logs in its folder)")
        self.stdout.write("\n" + report.table(result))
        if opts.get("json_out"):
            report.write(result, opts["json_out"])
            self.stdout.write(f"\nwrote {opts['json_out']}")
        if not report.passed(result):
            raise CommandError("the archive lost, stuck, repeated or corrupted something")
