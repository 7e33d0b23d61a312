"""Which Granary process runs on which host, as deploy/README.md's "Several hosts" lays it
out: web, one Celery worker per queue (beat beside the default worker: one beat in the whole
deployment), and a storage manager per silo serving that silo's queue archive.<silo>; and the
object store on a host of its own (an S3 server, `rclone serve s3`, over a folder of the run)."""
import os
import subprocess
import time
import urllib.error
import urllib.request

from django.conf import settings

from bench import live
from bench.chaos.fleet import terminate_sessions
from bench.s3server import rclone_binary

SILOS = ("silo1", "silo2")
WEB_PORT = 8000
OBJECTS, S3_PORT = "objects", 9000
BUCKET, S3_BUCKET = "cluster-objects", "granary-cluster"  # the Bucket row, the server's bucket


def commands(data_root):
    """{host: [(process name, argv)]}."""
    def worker(queue, concurrency=1):
        return live.worker_command(queue.replace(".", "-"), queue,
                                   ["--pool", "prefork", "--concurrency", str(concurrency)],
                                   log_level="INFO")

    layout = {"web": [("web", live.web_command())]}
    for queue in ("ingest", "archive", "distribution", "default"):
        layout[queue] = [(f"worker-{queue}", worker(queue))]
    # the transforms of subset orders beside distribution's worker, on their own queue
    layout["distribution"].append(("worker-transform", worker("transform")))
    # event deliveries beside the default worker: a lane per endpoint, so more than one process
    layout["default"].append(("worker-events", worker("events", 2)))
    layout["default"].append(("worker-fanout", worker("fanout")))
    layout["default"].append(("beat", live.beat_command(data_root / "celerybeat-schedule")))
    for silo in SILOS:
        layout[f"sm-{silo}"] = [(f"storage-manager-{silo}", worker(f"archive.{silo}", 2))]
    return layout


def s3_endpoint(network):
    return f"http://{network.address(OBJECTS)}:{S3_PORT}"


def s3_command(network, folder):
    """The object store's host: rclone serve s3 on the host's address over `folder` (each
    subfolder a bucket, each file an object); its keys come in RCLONE_AUTH_KEY, not on the
    command line where ps would show the secret."""
    return [rclone_binary(), "serve", "s3", "--config", os.devnull,
            "--addr", f"{network.address(OBJECTS)}:{S3_PORT}", f":local:{folder}"]


class Hosts:
    """Start a host's processes in its namespace, kill the host, start it again."""

    def __init__(self, network, env, run_dir):
        self.network, self.env, self.logs = network, dict(env), run_dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.objects_dir = run_dir / "objects"
        self.objects_dir.mkdir(parents=True, exist_ok=True)
        self.layout = {**commands(run_dir / "data"),
                       OBJECTS: [("s3-server", s3_command(network, self.objects_dir))]}
        self.host_of = {name: host for host, procs in self.layout.items() for name, _ in procs}
        self.procs = {}

    def _env(self, host):
        if host == OBJECTS:  # rclone reads no Granary setting; the keys Granary's hosts use
            env = {k: v for k, v in self.env.items()
                   if not k.startswith(("RCLONE_", "GRANARY_", "DATABASE_", "CELERY_"))}
            return dict(env, RCLONE_AUTH_KEY=f'"{self.env["GRANARY_S3_ACCESS_KEY"]},'
                                              f'{self.env["GRANARY_S3_SECRET_KEY"]}"')
        if host != "web":
            return self.env
        return dict(self.env, GRANARY_BIND=f"{self.network.address('web')}:{WEB_PORT}",
                    GRANARY_WEB_WORKERS="2")

    def start(self, host):
        for name, argv in self.layout[host]:
            with open(self.logs / f"{name}.log", "ab") as out:
                out.write(f"\n==== start {time.strftime('%H:%M:%S')}\n".encode())
                out.flush()
                self.procs[name] = subprocess.Popen(
                    self.network.exec_argv(host, argv), cwd=settings.BASE_DIR,
                    env=self._env(host), stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True)

    def start_all(self, but=()):
        for host in self.layout:
            if host not in but:
                self.start(host)

    def start_objects(self, timeout=30):
        """Start the object store's host and wait until its S3 server answers."""
        self.start(OBJECTS)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.objects_answer():
                return
            if self.procs["s3-server"].poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"the S3 server on {OBJECTS} did not answer within {timeout} s:\n"
                           + self.tail("s3-server"))

    def objects_answer(self):
        try:
            urllib.request.urlopen(s3_endpoint(self.network), timeout=2).close()
        except urllib.error.HTTPError:  # 403 to an unsigned request: it is up
            return True
        except OSError:
            return False
        return True

    def kill(self, host):
        killed = self.network.kill_host(host)
        for name, _ in self.layout[host]:
            self.procs[name].wait()
        return killed

    def dead(self, down=()):
        """Processes that exited though nobody killed their host (hosts `down` were)."""
        return {name: proc.returncode for name, proc in self.procs.items()
                if self.host_of[name] not in down and proc.poll() is not None}

    def stop_all(self):
        """Warm shutdown (SIGTERM), then kill -9 whatever is left in each namespace."""
        terminate_sessions(self.procs, timeout=15)
        for host in self.layout:
            self.network.kill_host(host)

    def tail(self, name, chars=3000):
        try:
            with open(self.logs / f"{name}.log", errors="replace") as f:
                return f.read()[-chars:]
        except OSError:
            return ""
