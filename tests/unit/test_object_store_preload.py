"""A worker's main process loads the S3 client's code before its pool forks (worker_init), so
an object mover's first batch in a new pool process does not import boto3 and parse S3's
service model first. Each case in a child process: this one has long imported boto3."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
import django
django.setup()
from celery.signals import worker_init
sender = None
if os.environ["QUEUES"]:   # a worker started with -Q
    from backend.celery import app
    app.amqp.queues.select(os.environ["QUEUES"].split(","))
    sender = type("Worker", (), {"app": app})()
worker_init.send(sender=sender)
print("imported" if "boto3" in sys.modules else "not-imported")
if "boto3" in sys.modules:
    import botocore.loaders
    from backend.archive.media import objectstore
    reads = []
    real = botocore.loaders.Loader.load_data_with_path
    def counted(loader, name, *args, **kwargs):
        reads.append(name)
        return real(loader, name, *args, **kwargs)
    botocore.loaders.Loader.load_data_with_path = counted
    if os.fork() == 0:   # a pool process
        for secret in ("b", "c"):   # two stores: each client from the inherited session
            objectstore._client({"endpoint_url": "http://127.0.0.1:9", "access_key": "a",
                                 "secret_key": secret}, 5)
        # the S3 model and its endpoint rules (~0.1 s to parse) come from the main process
        print("reads-of-s3", sum("s3" in name for name in reads), flush=True)
        os._exit(0)
    os.wait()
"""


@pytest.mark.parametrize("endpoint, queues, expected", [
    ("http://127.0.0.1:9", "", ["imported", "reads-of-s3", "0"]),
    ("http://127.0.0.1:9", "archive,default", ["imported", "reads-of-s3", "0"]),
    ("http://127.0.0.1:9", "ingest", ["not-imported"]),
    ("", "", ["not-imported"]),
], ids=["object store configured", "archive worker", "ingest worker", "none configured"])
def test_a_worker_loads_the_s3_client_before_its_pool_forks(endpoint, queues, expected):
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="backend.settings",
               GRANARY_S3_ENDPOINT=endpoint, QUEUES=queues)
    out = subprocess.run([sys.executable, "-c", "import os\n" + SCRIPT], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == expected
