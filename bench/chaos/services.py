"""The chaos run's own PostgreSQL cluster and RabbitMQ node, on free ports, so killing and
restarting them never disturbs the shared servers (5432, 5672) others use.

PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user (its data
folder is a temporary one that user owns). RabbitMQ runs as whoever starts it, with HOME in the
run folder so its Erlang cookie is its own.
"""
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_BIN = Path("/usr/local/bin")
RABBIT_BIN = Path("/usr/lib/rabbitmq/bin")  # the scripts themselves, not Debian's su wrappers


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not come up in {timeout} s")


def _pg_tool(name):
    """A PostgreSQL program: /usr/local/bin, PATH, or the newest /usr/lib/postgresql/*/bin."""
    found = PG_BIN / name
    if found.exists():
        return str(found)
    versions = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
                      key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    return shutil.which(name) or (str(versions[-1]) if versions else None)


def missing_programs():
    """The programs a chaos run needs that this host lacks."""
    rabbit = [n for n in ("rabbitmq-server", "rabbitmqctl")
              if not (RABBIT_BIN / n).exists() and not shutil.which(n)]
    return [n for n in ("initdb", "pg_ctl", "psql") if not _pg_tool(n)] + rabbit


class Postgres:
    """A throwaway cluster: initdb with trust auth, listening on host:port only (127.0.0.1
    unless given), reached from 127.0.0.1 and the network `allow` (CIDR) when given."""

    def __init__(self, run_dir, port=None, home=None, host="127.0.0.1", allow=None):
        self.port, self.host, self.allow = port or free_port(), host, allow
        self.as_root = os.geteuid() == 0
        if home:
            self.home = Path(home)
        elif self.as_root:  # the postgres user must own the data folder and reach its parents
            self.home = Path(tempfile.mkdtemp(prefix="granary-chaos-pg-"))
            owner = pwd.getpwnam("postgres")
            os.chown(self.home, owner.pw_uid, owner.pw_gid)
        else:
            self.home = Path(run_dir) / "postgres"
            self.home.mkdir(parents=True, exist_ok=True)
        self.run_dir = Path(run_dir)
        self.data = self.home / "data"
        self.log = Path(run_dir) / "logs" / "postgres.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)

    @property
    def url(self):
        return f"postgres://postgres@{self.host}:{self.port}/granary_chaos"

    def spec(self):
        """What another process needs to take this cluster over (see attach)."""
        return {"run_dir": str(self.run_dir), "port": self.port, "home": str(self.home),
                "host": self.host, "allow": self.allow}

    def _run(self, *argv, check=True):
        argv = [_pg_tool(argv[0]), *argv[1:]]
        if self.as_root:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        return subprocess.run(argv, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=120)

    def start(self):
        if not self.data.exists():
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
                      "-E", "UTF8", "--no-sync")
            if self.allow:
                with open(self.data / "pg_hba.conf", "a") as hba:
                    hba.write(f"host all all {self.allow} trust\n")
        options = (f"-c listen_addresses={self.host} -c port={self.port} "
                   "-c unix_socket_directories='' -c fsync=off -c max_connections=200")
        server_log = self.home / "server.log"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(server_log), "-o", options,
                  "-w", "-t", "60", "start")
        _wait(lambda: _answers(self.port, self.host), 60, "PostgreSQL")

    def create_database(self):
        subprocess.run([_pg_tool("psql"), "-h", self.host, "-p", str(self.port), "-U",
                        "postgres", "-qc", "CREATE DATABASE granary_chaos"], check=True)

    def stop(self, mode="fast"):
        if self.data.exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop",
                      check=False)

    def restart(self):
        self.stop()
        self.start()

    def remove(self, keep=False):
        """Keep the server's log in the run folder; drop a temporary data folder, or with keep
        move it into the run folder (to start it again: pg_ctl -D .../postgres/data start)."""
        if (self.home / "server.log").exists():
            shutil.copy(self.home / "server.log", self.log)
        if not self.as_root or self.home.parent == self.run_dir:
            return
        if keep:
            shutil.move(str(self.home), str(self.run_dir / "postgres"))
        else:
            shutil.rmtree(self.home, ignore_errors=True)


class Rabbit:
    """A second RabbitMQ node, chaos-<pid>@localhost, with its own ports, config and files,
    listening on host (127.0.0.1 unless given)."""

    def __init__(self, run_dir, port=None, node=None, dist_port=None, started=False,
                 host="127.0.0.1"):
        self.host = host
        self.run_dir, self.dir = Path(run_dir), Path(run_dir) / "rabbitmq"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.dist_port = dist_port or free_port()
        self.node = node or f"chaos-{os.getpid()}@localhost"
        (self.dir / "rabbitmq.conf").write_text(
            f"listeners.tcp.local = {host}:{self.port}\nloopback_users = none\n")
        (self.dir / "enabled_plugins").write_text("[].\n")
        self.env = dict(
            os.environ, HOME=str(self.dir), RABBITMQ_NODENAME=self.node,
            RABBITMQ_NODE_IP_ADDRESS=host, RABBITMQ_NODE_PORT=str(self.port),
            RABBITMQ_DIST_PORT=str(self.dist_port),
            RABBITMQ_CONFIG_FILE=str(self.dir / "rabbitmq"),
            RABBITMQ_ENABLED_PLUGINS_FILE=str(self.dir / "enabled_plugins"),
            RABBITMQ_MNESIA_BASE=str(self.dir / "mnesia"), RABBITMQ_LOG_BASE=str(self.dir / "log"),
            RABBITMQ_PID_FILE=str(self.dir / "rabbit.pid"),
            RABBITMQ_ADVANCED_CONFIG_FILE=str(self.dir / "advanced.config"))
        self.started = started

    @property
    def url(self):
        return f"amqp://guest:guest@{self.host}:{self.port}//"

    def spec(self):
        return {"run_dir": str(self.run_dir), "port": self.port, "node": self.node,
                "dist_port": self.dist_port, "started": self.started, "host": self.host}

    def _tool(self, name):
        found = RABBIT_BIN / name
        return str(found) if found.exists() else (shutil.which(name) or name)

    def ctl(self, *args, timeout=120, check=True):
        return subprocess.run([self._tool("rabbitmqctl"), "-n", self.node, *args], env=self.env,
                              check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout)

    def start(self):
        subprocess.run([self._tool("rabbitmq-server"), "-detached"], env=self.env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        self.started = True
        self.ctl("wait", "--timeout", "120", str(self.dir / "rabbit.pid"), timeout=150)
        self.ctl("await_startup", timeout=150)
        _wait(lambda: _answers(self.port, self.host), 60, "RabbitMQ")

    def stop(self):
        if self.started:
            self.ctl("stop", str(self.dir / "rabbit.pid"), check=False)
            self.started = False

    def restart(self):
        self.stop()
        self.start()
