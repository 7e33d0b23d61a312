"""`manage.py cluster`: Granary's processes as separate hosts in network namespaces, a journey
through them from a client host, one silo's storage manager host down and back (see
bench/cluster/). Run as root (scripts/cluster.sh, `make cluster`); exits non-zero on any
failed check."""
import os
import sys

from django.core.management.base import CommandError

from backend.cli import Command as DomainCommand
from bench.cluster import main


class Command(DomainCommand):
    help = ("Start web, a worker per queue, a storage manager per silo and an S3 object store "
            "as hosts in network namespaces, run ingests, tape and object-store recalls and "
            "downloads from a client host, take one storage manager host and the object store "
            "down and back; print every check")

    def add_arguments(self, parser):
        parser.add_argument("--net", type=int, default=77,
                            help="the hosts' subnet is 10.NET.0.0/24 (default 77)")
        parser.add_argument("--keep", action="store_true", help="keep the run folder")
        parser.add_argument("--cleanup", action="store_true",
                            help="remove what a run on this --net left behind, and stop")
        parser.add_argument("--inner", action="store_true", help="(internal) the client host")
        parser.add_argument("--run-dir", help="(internal) the run folder")

    def handle(self, *args, **opts):
        if opts["inner"]:
            sys.exit(main.inner(opts))
        if os.geteuid() != 0:
            raise CommandError("network namespaces need root: run as root (sudo make cluster)")
        if opts["cleanup"]:
            return main.cleanup(opts["net"])
        if main.outer(opts, self.stdout.write) != 0:
            raise CommandError("the cluster journey failed (see above and the kept folder)")
