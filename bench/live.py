"""A live Granary for end-to-end benchmarks: gunicorn and Celery workers as subprocesses on the
bench database and the configured broker, driven over HTTP with a provider's token."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

from django.conf import settings
from django.db import connection

# The archive must not hold writes back waiting for fuller batches: the clock is running.
NO_WAITS = {"GRANARY_WRITE_MAX_WAIT_S": "0", "GRANARY_READ_MAX_WAIT_S": "0",
            "GRANARY_REMOUNT_DELAY_S": "0", "GRANARY_DISMOUNT_DELAY_S": "0",
            "GRANARY_TIME_SCALE": "0"}

# The workers as deploy/Procfile runs them: prefork, two processes each. Ingest chunks go
# through side by side (one waits on the database while the other works), and so do the drives
# writing the two copies, each in its own process (threads in one process would share one core).
# Distribution is left out: subscription matching is not ingest; its nudges are purged at the end.
WORKERS = (("ingest", "ingest", ["--pool", "prefork", "--concurrency", "2"]),
           ("archive", "archive,default", ["--pool", "prefork", "--concurrency", "2"]))


def media(capacity_bytes=10**13):
    """A fast drive model: delays are skipped anyway (time scale 0)."""
    return {"name": "bench-media", "rate_mb_s": 400, "mount_s_min": 10, "mount_s_max": 20,
            "unmount_s": 15, "position_s_per_gb": 0.3, "capacity_bytes": capacity_bytes}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _database_url():
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    return os.environ["DATABASE_URL"]


def purge_queues():
    """Drop messages left on the broker by earlier runs (they name rows of other databases)."""
    from backend.celery import app

    return app.control.purge()


class Live:
    """The running processes and an HTTP client holding the provider's token."""

    def __init__(self, base_url, token, procs, logs, provider_url=None):
        self.base_url, self.token, self.procs, self.logs = base_url, token, procs, logs
        # the provider's calls go to the provider pool when there is one (deploy/README.md)
        self.provider_url = provider_url or base_url
        self.backends = {}

    def call(self, method, path, body=None, content_type="application/json", timeout=600,
             headers=None):
        data = body
        if isinstance(body, str):
            data = body.encode()
        elif body is not None and not isinstance(body, bytes):
            data = json.dumps(body).encode()
        request = urllib.request.Request(self.provider_url + path, data=data, method=method,
                                         headers={"Authorization": f"Token {self.token}",
                                                  "Content-Type": content_type,
                                                  "Accept": "application/json",
                                                  **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def check(self):
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited ({proc.returncode}):\n{self.tail(name)}")

    def cpu_seconds(self):
        """{process name: CPU seconds it and its children (gunicorn's and Celery's workers)
        have used so far}, plus PostgreSQL as "database": the backends serving the bench's
        database (this process's own excluded), so other databases on a shared server are not
        counted. A backend is last seen at a sample (here and while waiting): one that ended
        between samples keeps what it had used then."""
        out = {name: tree_cpu(proc.pid) for name, proc in self.procs.items()}
        if connection.vendor == "postgresql":
            self.sample_database()
            out["database"] = sum(self.backends.values())
        return {name: round(seconds, 2) for name, seconds in out.items()}

    def sample_database(self):
        """Note the CPU seconds of every backend of the bench's database."""
        if connection.vendor != "postgresql":
            return
        with connection.cursor() as cursor:
            cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                           " AND pid <> pg_backend_pid()")
            pids = [pid for (pid,) in cursor.fetchall()]
        for pid in pids:
            seconds = _cpu(pid)
            if seconds:
                self.backends[pid] = max(seconds, self.backends.get(pid, 0.0))

    def tail(self, name, chars=4000):
        try:
            with open(self.logs[name], errors="replace") as f:
                return f.read()[-chars:]
        except OSError:
            return ""

    def wait(self, predicate, timeout, what, interval=0.05):
        """Poll predicate() until true; fail with the processes' logs when it never is."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            self.check()
            self.sample_database()
            time.sleep(interval)
        logs = "\n".join(f"--- {n}\n{self.tail(n)}" for n in self.procs)
        raise RuntimeError(f"{what} did not finish in {timeout} s\n{logs}")


def _stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _cpu(pid):
    """User + system CPU seconds of a live process (0 once it is gone)."""
    fields = _stat(pid)
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu(pid):
    """CPU seconds a live process and its children (pool processes) have used so far."""
    return sum(_cpu(p) for p in _tree(pid))


def _tree(pid):
    """pid and its descendants."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as f:
                    todo += [int(child) for child in f.read().split()]
        except OSError:
            continue
    return out


def web_command():
    """gunicorn as deploy/ runs it (bind and process count from GRANARY_BIND and
    GRANARY_WEB_WORKERS)."""
    return [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py",
            "backend.wsgi:application"]


def worker_command(node, queues, pool, log_level="WARNING"):
    """A Celery worker on `queues` as deploy/Procfile runs it, named `node`@host."""
    return [sys.executable, "-m", "celery", "-A", "backend", "worker", "-Q", queues,
            "-n", f"{node}@%h", *pool, "--without-mingle", "--without-gossip",
            "--without-heartbeat", "-l", log_level]


def beat_command(schedule):
    """Celery beat (exactly one per deployment), its schedule file at `schedule`."""
    return [sys.executable, "-m", "celery", "-A", "backend", "beat", "-l", "WARNING",
            "--schedule", str(schedule)]


@contextmanager
def running(token, extra_env=None, workers=WORKERS, wrap_web=None, provider_pool=True):
    """Start web and workers (waiting until the web answers); stop them all on exit.
    `wrap_web(argv)` may return the argv that starts the web server in some harness. As
    deploy/ runs it, the provider API has a gunicorn of its own (deploy/README.md, "The web
    comes first"): the provider's calls (Live.call) go there, the users' to base_url; without
    `provider_pool`, one gunicorn answers both."""
    env = dict(os.environ, DATABASE_URL=_database_url(), **NO_WAITS, **(extra_env or {}))
    env.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
    env["GRANARY_LOG_LEVEL"] = "WARNING"
    logs_dir = settings.DATA_ROOT / "bench-logs"
    logs_dir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    commands = {"web": web_command()}
    if wrap_web:
        commands["web"] = wrap_web(commands["web"])
    web_env = dict(env, GRANARY_BIND=f"127.0.0.1:{port}", GRANARY_WEB_WORKERS="2")
    envs = {"web": web_env}
    provider_url = None
    if provider_pool:
        provider_port = _free_port()
        commands["provider"] = web_command()
        envs["provider"] = dict(env, GRANARY_WEB_POOL="provider",
                                GRANARY_PROVIDER_BIND=f"127.0.0.1:{provider_port}",
                                GRANARY_PROVIDER_WORKERS="1")
        provider_url = f"http://127.0.0.1:{provider_port}"
    nodes = []
    for name, queues, pool in workers:
        nodes.append(f"bench-{name}-{os.getpid()}")
        commands[name] = worker_command(nodes[-1], queues, pool)
    purge_queues()
    procs, logs = {}, {}
    # a benchmark stopped from outside still stops what it started
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        for name, argv in commands.items():
            logs[name] = logs_dir / f"{name}.log"
            with open(logs[name], "wb") as out:
                procs[name] = subprocess.Popen(
                    argv, cwd=settings.BASE_DIR, env=envs.get(name, env),
                    stdout=out, stderr=subprocess.STDOUT)
        live = Live(f"http://127.0.0.1:{port}", token, procs, logs, provider_url)

        def answers():
            try:
                if live.call("GET", "/api/v1/ingest/requests/?limit=1", timeout=5)[0] != 200:
                    return False
                if provider_url:     # the users' pool too
                    with urllib.request.urlopen(live.base_url + "/api/health/", timeout=5):
                        pass
                return True
            except OSError:
                return False

        live.wait(answers, 60, "the web app", interval=0.2)
        live.wait(_workers_ready(nodes), 60, "the workers", interval=0.2)
        yield live
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        purge_queues()
        signal.signal(signal.SIGTERM, previous)


def _workers_ready(nodes):
    """A check that every worker node answers a ping: it has started its pool and consumes.
    The web answers first, and a phase measured while the workers still import and fork ran
    beside their start (the first phase of a run was the slower, by up to a tenth)."""
    from backend.celery import app

    wanted = {f"{node}@{socket.gethostname()}" for node in nodes}

    def ready():
        if not wanted:
            return True
        replies = app.control.ping(destination=sorted(wanted), timeout=0.5) or []
        return wanted <= {name for reply in replies for name in reply}
    return ready


def provider_token(name, collections):
    """A provider user for `name` that may deliver `collections`; its API token."""
    from backend.accounts import roles
    from backend.accounts.services import create_user

    _, _, token = create_user(f"{name.lower()}-bench", roles.PROVIDER, provider=name,
                              collections=collections)
    return token


def archived_counts(collection):
    """(granules ARCHIVED, verified copies) of a collection."""
    from backend.archive.models import FileCopy
    from backend.catalog.models import Granule

    archived = Granule.objects.filter(collection=collection,
                                      state=Granule.State.ARCHIVED).count()
    verified = FileCopy.objects.filter(file__granule__collection=collection,
                                       state=FileCopy.State.VERIFIED).count()
    return archived, verified


def layout(collection_names, capacity_bytes=10**13, drives_per_silo=2, volumes_per_silo=2):
    """Two silos and a collection per name with a two-copy policy."""
    from backend.archive import operations
    from backend.catalog.models import Collection

    primary, backup = operations.install_layout(drives_per_silo=drives_per_silo,
                                                volumes_per_silo=volumes_per_silo,
                                                model=media(capacity_bytes))
    out = []
    for short_name in collection_names:
        collection = Collection.objects.create(short_name=short_name, version="1", title="bench")
        operations.set_policy(collection, [primary, backup])
        out.append(collection)
    return out
