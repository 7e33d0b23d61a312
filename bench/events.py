"""events: from a granule archived to its signed webhook delivered, with a dead and a slow
endpoint among the healthy ones.

Granules are announced as the archive announces them (one granule.archived event each, in
batches, through events.emit_many), at a steady rate, and delivered by real events workers:
Celery on the `events` queue as deploy/Procfile runs them (prefork, --workers processes), on
the configured broker, fanning out and sending on one lane per endpoint; the bench runs beat's
events sweep on its schedule. A local receiver in a process of its own (kept alive, HTTP/1.1)
checks every signature with the `standardwebhooks` library and counts copies.
The granules are split among rounds of two phases, interleaved (alone, mixed, alone, mixed):
healthy endpoints alone (the dead and slow ones disabled), then with a dead one (nothing
listens) and a slow one (answers after --slow-s); the slow and dead ones must add little to the
healthy ones' p95, compared within the run so the machine's load drifting falls on both. The
baseline: a bare POST of the same body to the same receiver, timed in this run. PostgreSQL only
(the lanes write from many processes). With RabbitMQ as the broker, an AMQP endpoint publishes
every event (archived, then withdrawn) and a consumer checks each granule's order.
"""
NAME = "events"
HELP = "archived -> webhook delivered latency, with a dead and a slow endpoint"
GOAL_P95_S = 2.0
GOAL_ADDED_S = 0.1


def add_arguments(parser):
    parser.add_argument("--granules", type=int, default=600,
                        help="in all, split among the rounds' alone and mixed phases")
    parser.add_argument("--rounds", type=int, default=2,
                        help="alone / mixed phase pairs, interleaved")
    parser.add_argument("--endpoints", type=int, default=10, help="healthy webhooks")
    parser.add_argument("--rate", type=float, default=20, help="granules archived per second")
    parser.add_argument("--workers", type=int, default=4,
                        help="events worker processes (GRANARY_EVENTS_CONCURRENCY's default)")
    parser.add_argument("--slow-s", type=float, default=10)
    parser.add_argument("--port", type=int, default=8886)
    parser.add_argument("--dead-port", type=int, default=8889)


def run(options):
    from . import events_run

    return events_run.run(options)

