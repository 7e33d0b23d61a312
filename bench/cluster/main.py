"""`manage.py cluster`: the outer process (root namespace) makes the network, starts PostgreSQL
and RabbitMQ on the bridge address, picks the object store's keys and runs the journey in a
child on the client host; it removes all of it on the way out, also when the run fails or is
interrupted."""
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time

from django.conf import settings

from bench import live
from bench.chaos.services import Postgres, Rabbit, free_port

from .hosts import s3_endpoint
from .network import Network

# Short leases so the archive notices a dead host (its drives, its silo) within a short run.
LEASES = {"GRANARY_DRIVE_LEASE_S": "15", "GRANARY_INGEST_LEASE_S": "30",
          "GRANARY_INGEST_STALE_S": "30", "GRANARY_SILO_STALE_S": "20"}


def state_file(net):
    return settings.DATA_ROOT / "cluster" / f"gc{net}.json"


def outer(opts, write):
    """Returns the child's exit status (0: every check held)."""
    net = opts["net"]
    run_dir = (settings.DATA_ROOT / "cluster" / f"run-{time.strftime('%Y%m%d-%H%M%S')}"
               f"-{os.getpid()}").resolve()
    (run_dir / "data").mkdir(parents=True)
    write(f"cluster run folder: {run_dir}")
    network = Network(net)
    previous = {s: signal.signal(s, lambda *_: sys.exit(143)) for s in (signal.SIGTERM,
                                                                         signal.SIGINT)}
    status = 1
    postgres = rabbit = None
    try:
        cleanup(net)
        network.create()
        postgres = Postgres(run_dir, free_port(), host=network.gateway, allow=network.cidr)
        rabbit = Rabbit(run_dir, free_port(), node=f"cluster{net}-{os.getpid()}@localhost",
                        host=network.gateway)
        state_file(net).write_text(json.dumps({"postgres": postgres.spec(),
                                               "rabbit": rabbit.spec()}))
        postgres.start()
        postgres.create_database()
        rabbit.start()
        write(f"PostgreSQL {postgres.url} and RabbitMQ {rabbit.url} (root namespace, on "
              f"the bridge)")
        status = _child(opts, run_dir, network, postgres, rabbit)
    finally:
        keep = opts["keep"] or status != 0
        _quietly("removing the network", network.destroy)
        _quietly("stopping RabbitMQ", lambda: _stop_rabbit(rabbit))
        _quietly("stopping PostgreSQL", lambda: postgres and (postgres.stop(),
                                                                 postgres.remove(keep=keep)))
        state_file(net).unlink(missing_ok=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if opts["keep"] or status != 0:
            write(f"kept {run_dir} (logs of every process in logs/)")
        else:
            shutil.rmtree(run_dir, ignore_errors=True)
    return status


def _quietly(what, step):
    """One step of the clean-up: its failure is told and the next steps still run."""
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, the rest is cleaned up
        print(f"cleanup: {what} failed: {exc!r}", file=sys.stderr)


def _stop_rabbit(rabbit):
    """Stop the node if it still runs: SIGTERM (RabbitMQ shuts down cleanly on it), then
    SIGKILL after a minute. Not `rabbitmqctl stop`: a Ctrl-C reaches the node too (it is in the
    terminal's process group), and rabbitmqctl then waits for a node already going away."""
    pid_file = rabbit.dir / "rabbit.pid" if rabbit else None
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, signal.SIGTERM)
    except (AttributeError, OSError, ValueError):  # no node, no pid file, or gone
        return
    deadline = time.monotonic() + 60
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.2)
    if os.path.exists(f"/proc/{pid}"):
        os.kill(pid, signal.SIGKILL)


def object_store_environment(network):
    """GRANARY_S3_* of a run: the S3 server on the objects host, keys of the run's own (the
    server is started again with the same ones)."""
    return {"GRANARY_S3_ENDPOINT": s3_endpoint(network),
            "GRANARY_S3_ACCESS_KEY": f"cluster-{secrets.token_hex(6)}",
            "GRANARY_S3_SECRET_KEY": secrets.token_hex(20),
            "GRANARY_S3_REGION": "us-east-1", "GRANARY_S3_TIMEOUT_S": "5"}


def _child(opts, run_dir, network, postgres, rabbit):
    env = dict(os.environ, DATABASE_URL=postgres.url, CELERY_BROKER_URL=rabbit.url,
               GRANARY_DATA_ROOT=str(run_dir / "data"), **object_store_environment(network))
    argv = network.exec_argv("client", [sys.executable, "manage.py", "cluster", "--inner",
                                        "--net", str(opts["net"]), "--run-dir", str(run_dir)])
    child = subprocess.Popen(argv, cwd=settings.BASE_DIR, env=env)
    try:
        return child.wait()
    except BaseException:
        child.terminate()  # interrupted: the child stops the hosts it started first
        child.wait()
        raise


def cleanup(net):
    """What a run killed -9 left behind: its namespaces (and every process in them), its
    bridge, its PostgreSQL and RabbitMQ (named in the state file)."""
    Network(net).destroy()
    found = state_file(net)
    found.parent.mkdir(parents=True, exist_ok=True)
    try:
        services = json.loads(found.read_text())
    except (OSError, ValueError):  # nothing left, or the run cleaning up at the same time
        return
    _quietly("stopping RabbitMQ", lambda: _stop_rabbit(Rabbit(**services["rabbit"])))
    _quietly("stopping PostgreSQL", lambda: Postgres(**services["postgres"]).stop(
        mode="immediate"))
    found.unlink(missing_ok=True)


def host_environment(network, run_dir):
    """The settings every host gets: the database and broker on the bridge address, the object
    store on its host (GRANARY_S3_*: this process has them from the outer one), the shared data
    root, drives bound to their silo's queue, and the timers of a short run."""
    return dict(os.environ, **live.NO_WAITS, **LEASES, GRANARY_LOG_LEVEL="INFO",
                DJANGO_SETTINGS_MODULE="backend.settings", GRANARY_ARCHIVE_QUEUE_PER_SILO="1",
                GRANARY_DATA_ROOT=str(run_dir / "data"),
                DJANGO_ALLOWED_HOSTS=f"{network.address('web')},127.0.0.1,localhost")


def inner(opts):
    """The client host: start the object store's host, set the database up (its bucket made on
    that host's server), start the other hosts, run the journey."""
    from pathlib import Path

    from .hosts import OBJECTS, Hosts
    from .journey import Failed, Journey, say

    run_dir, network = Path(opts["run_dir"]), Network(opts["net"])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    hosts = Hosts(network, host_environment(network, run_dir), run_dir)
    started = time.monotonic()
    try:
        hosts.start_objects()  # before the set-up, which makes the bucket on the server
        tokens, collections = _setup()
        hosts.start_all(but=(OBJECTS,))
        Journey(network, hosts, tokens, collections).run()
    except Failed as exc:
        say(f"  FAILED  {exc}")
        return 1
    finally:
        hosts.stop_all()
    say(f"\ncluster journey: every check held ({time.monotonic() - started:.0f} s)")
    return 0


def _setup():
    """Migrate; the demo's archive layout (silo1 and silo2, four drives each); a bucket on the
    objects host (made on the server); a collection with the two-copy policy (silo1, silo2),
    one keeping a single copy on silo1, and one with copy 1 in the bucket and copy 2 on tape
    (silo2); a provider, an operator and a user. Returns ({role: token}, [collection keys]:
    two copies, one copy, object store)."""
    from django.core.management import call_command

    from backend.accounts import roles
    from backend.accounts.services import create_user
    from backend.archive import operations
    from backend.archive.services import add_bucket
    from backend.catalog.models import Collection

    from .hosts import BUCKET, S3_BUCKET

    call_command("migrate", verbosity=0)
    primary, backup = operations.install_layout()
    bucket = add_bucket(BUCKET, S3_BUCKET, create=True)
    two = Collection.objects.create(short_name="CLUSTER", version="1", title="two copies")
    one = Collection.objects.create(short_name="CLUSTER1", version="1", title="one copy")
    objects = Collection.objects.create(short_name="CLUSTERO", version="1",
                                        title="copy 1 in the object store, copy 2 on tape")
    operations.set_policy(two, [primary, backup])
    operations.set_policy(one, [primary])
    operations.set_policy(objects, [bucket, backup])
    tokens = {"provider": live.provider_token("CLUSTER", [two, one, objects]),
              "operator": create_user("cluster-operator", roles.OPERATOR)[2],
              "user": create_user("cluster-user", roles.USER)[2]}
    return tokens, [two.key, one.key, objects.key]
