"""Which Granary process runs on which host, as deploy/README.md's "Several hosts" lays it
out: web, one Celery worker per queue (beat beside the default worker: one beat in the whole
deployment), and a storage manager per silo serving that silo's queue archive.<silo>."""
import subprocess
import time

from django.conf import settings

from bench import live
from bench.chaos.fleet import terminate_sessions

SILOS = ("silo1", "silo2")
WEB_PORT = 8000


def commands(data_root):
    """{host: [(process name, argv)]}."""
    def worker(queue, concurrency=1):
        return live.worker_command(queue.replace(".", "-"), queue,
                                   ["--pool", "prefork", "--concurrency", str(concurrency)],
                                   log_level="INFO")

    layout = {"web": [("web", live.web_command())]}
    for queue in ("ingest", "archive", "distribution", "default"):
        layout[queue] = [(f"worker-{queue}", worker(queue))]
    layout["default"].append(("beat", live.beat_command(data_root / "celerybeat-schedule")))
    for silo in SILOS:
        layout[f"sm-{silo}"] = [(f"storage-manager-{silo}", worker(f"archive.{silo}", 2))]
    return layout


class Hosts:
    """Start a host's processes in its namespace, kill the host, start it again."""

    def __init__(self, network, env, run_dir):
        self.network, self.env, self.logs = network, dict(env), run_dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.layout = commands(run_dir / "data")
        self.procs = {}

    def _env(self, host):
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

    def start_all(self):
        for host in self.layout:
            self.start(host)

    def kill(self, host):
        killed = self.network.kill_host(host)
        for name, _ in self.layout[host]:
            self.procs[name].wait()
        return killed

    def dead(self):
        """Processes that exited though nobody killed their host."""
        return {name: proc.returncode for name, proc in self.procs.items()
                if proc.poll() is not None}

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
