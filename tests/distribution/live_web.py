"""gunicorn as deploy/ runs it (sendfile, gthread), as a subprocess on the test database and
data root, with its access log kept: what a downloader talks to in production."""
import os
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from tests.workers import ROOT, database_url, stop_process

CLIENT = ROOT / "scripts" / "granary-get"


class Web:
    def __init__(self, url, log):
        self.url, self.log = url, log

    def access_log(self):
        return Path(self.log).read_text(errors="replace")


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def gunicorn(data_root, port=None, **env):
    """gunicorn serving the test database and `data_root` (with the test's secret key, so the
    links the test signs are the server's) on `port` (a free one if None); extra settings as
    environment variables."""
    port = port or _free_port()
    log = data_root / "gunicorn.log"
    environment = dict(os.environ, DATABASE_URL=database_url(), GRANARY_DATA_ROOT=str(data_root),
                       DJANGO_SECRET_KEY=settings.SECRET_KEY, GRANARY_BIND=f"127.0.0.1:{port}",
                       GRANARY_WEB_WORKERS="1", GRANARY_LOG_LEVEL="INFO",
                       GRANARY_CACHE_GB=str(settings.GRANARY_CACHE_BYTES / 2**30),
                       DJANGO_SETTINGS_MODULE="backend.settings", **env)
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py",
                                 "backend.wsgi:application"], cwd=ROOT, env=environment,
                                stdout=out, stderr=subprocess.STDOUT)
    web = Web(f"http://127.0.0.1:{port}", log)
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise AssertionError(f"gunicorn exited:\n{web.access_log()[-4000:]}")
            try:
                with urllib.request.urlopen(web.url + "/api/health/", timeout=5):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"gunicorn never answered:\n{web.access_log()[-4000:]}")
        yield web
    finally:
        stop_process(proc, 30)


def run_client(args, **kwargs):
    """Run granary-get (or an order's script: args[0] a path) to the end; CompletedProcess."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300,
                          **kwargs)
