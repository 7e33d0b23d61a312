"""Granary's processes as deploy/ runs them: gunicorn, one Celery worker per queue (the archive
worker is the storage manager: its tasks run the drives) and beat. Each runs in its own
session so a kill -9 takes the whole process tree, as a crashed host would."""
import os
import signal
import subprocess
import time

from django.conf import settings

from bench import live

# Queue -> worker concurrency: two archive processes so two drives write side by side.
QUEUES = (("ingest", 1), ("archive", 2), ("distribution", 1), ("transform", 1),
          ("default", 1))


class Fleet:
    """Start, kill -9 and restart the processes; `env` applies to every (re)start."""

    def __init__(self, run_dir, env, web_port):
        self.run_dir, self.env, self.web_port = run_dir, dict(env), web_port
        self.logs = run_dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.procs, self.files = {}, {}
        self.commands = {"web": live.web_command()}
        for queue, concurrency in QUEUES:
            self.commands[f"worker-{queue}"] = live.worker_command(
                f"chaos-{queue}", queue, ["--pool", "prefork", "--concurrency", str(concurrency)],
                log_level="INFO")
        self.commands["beat"] = live.beat_command(run_dir / "celerybeat-schedule")

    @property
    def names(self):
        return list(self.commands)

    def _env(self, name):
        env = dict(self.env)
        if name == "web":
            env.update(GRANARY_BIND=f"127.0.0.1:{self.web_port}", GRANARY_WEB_WORKERS="2")
        return env

    def start(self, name):
        log = self.logs / f"{name}.log"
        with open(log, "ab") as out:
            out.write(f"\n==== start {time.strftime('%H:%M:%S')}\n".encode())
            out.flush()
            self.procs[name] = subprocess.Popen(
                self.commands[name], cwd=settings.BASE_DIR, env=self._env(name), stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)
        self.files[name] = log
        pids = self.run_dir / "pids"
        pids.mkdir(exist_ok=True)
        (pids / name).write_text(str(self.procs[name].pid))

    def start_all(self):
        for name in self.commands:
            self.start(name)

    def kill(self, name):
        """kill -9 the process and every process of its session (pool children included)."""
        proc = self.procs.get(name)
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def restart(self, name):
        self.kill(name)
        self.start(name)

    def restart_all(self):
        for name in self.commands:
            self.restart(name)

    def dead(self):
        """Processes that exited on their own (not killed by the run)."""
        return {name: proc.returncode for name, proc in self.procs.items()
                if proc.poll() is not None}

    def stop_all(self):
        """Warm shutdown first (SIGTERM), then kill -9 whatever remains."""
        for name in terminate_sessions(self.procs):
            self.kill(name)
        for name in self.procs:  # children that outlived their leader
            try:
                os.killpg(self.procs[name].pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def tail(self, name, chars=3000):
        try:
            with open(self.files[name], errors="replace") as f:
                return f.read()[-chars:]
        except (OSError, KeyError):
            return ""


def terminate_sessions(procs, timeout=20):
    """SIGTERM each process's session (a warm shutdown) and wait up to `timeout` s in all;
    returns the names of those still running."""
    for proc in procs.values():
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline, left = time.monotonic() + timeout, []
    for name, proc in procs.items():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            left.append(name)
    return left


def kill_leftovers(run_dir):
    """kill -9 the sessions of processes a run started and left behind (its runner was killed
    itself): each pid file names a session leader; only Granary's own are touched."""
    for pid_file in (run_dir / "pids").glob("*"):
        pid = int(pid_file.read_text())
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read()
        except OSError:
            continue
        if b"celery" in argv or b"gunicorn" in argv:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
