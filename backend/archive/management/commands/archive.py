"""`manage.py archive <subcommand>`: the archive tier from the command line.

A thin layer: each subcommand is an entry in SUBCOMMANDS (its help, a function adding its
arguments, and a handler taking the command and the parsed options); the work is done by the
archive modules.
"""
import json
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from backend.archive import scheduler, simulator


@dataclass(frozen=True)
class Subcommand:
    help: str
    arguments: object
    handler: object


def _simulate_arguments(parser):
    parser.add_argument("--workload", required=True, help="workload JSON (nas26, gsfc97 format)")
    parser.add_argument("--policy", choices=sorted(scheduler.POLICIES), default="smart")
    parser.add_argument("--hours", type=float, default=24.0, help="virtual hours to simulate")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", metavar="OUT", help="also write the result here")


def _simulate(command, opts):
    path = Path(opts["workload"])
    if not path.is_file():
        raise CommandError(f"no workload file at {path}")
    if opts["hours"] <= 0:
        raise CommandError("--hours must be positive")
    result = simulator.simulate(simulator.load_workload(path), opts["policy"], opts["hours"],
                                opts["seed"])
    command.stdout.write(_table(result))
    if opts["json"]:
        Path(opts["json"]).write_text(json.dumps(result, indent=2) + "\n")
        command.stdout.write(f"result written to {opts['json']}")


def _table(result):
    """The result as aligned `name  value` lines, nested figures flattened with dots."""
    rows = []

    def walk(prefix, value):
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else key, inner)
        else:
            rows.append((prefix, f"{value:,}" if isinstance(value, int | float)
                         and not isinstance(value, bool) else str(value)))

    walk("", result)
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


SUBCOMMANDS = {
    "simulate": Subcommand(
        "Replay a workload on the simulated silos under a scheduling policy",
        _simulate_arguments, _simulate,
    ),
}


class Command(BaseCommand):
    help = "Archive tier commands: " + ", ".join(SUBCOMMANDS)

    def add_arguments(self, parser):
        subparsers = parser.add_subparsers(dest="subcommand", required=True)
        for name, sub in SUBCOMMANDS.items():
            sub.arguments(subparsers.add_parser(name, help=sub.help))

    def handle(self, *args, **opts):
        SUBCOMMANDS[opts["subcommand"]].handler(self, opts)
