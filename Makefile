# Granary: `make run` sets up and starts the demo; `make test` runs every test.
.PHONY: run setup test lint bench chaos chaos-short cluster

run: setup
	scripts/run.sh

setup:
	scripts/setup.sh

test:
	scripts/test.sh

lint:
	.venv/bin/ruff check .


# Benchmarks print a table and write JSON to var/bench-results/ (long: minutes, not in CI).
bench: setup
	.venv/bin/python manage.py bench archive-write --files 8 --size-mib 256 --json var/bench-results/archive-write.json
	.venv/bin/python manage.py bench simulator --json var/bench-results/simulator.json
	.venv/bin/python manage.py bench ingest-large --files 8 --size-mib 256 --json var/bench-results/ingest-large.json
	.venv/bin/python manage.py bench ingest-small --granules 10000 --json var/bench-results/ingest-small.json
	.venv/bin/python manage.py bench object-store --files 8 --size-mib 256 --granules 10000 --json var/bench-results/object-store.json
	.venv/bin/python manage.py bench tape --files 8 --size-mib 256 --small 10000 --json var/bench-results/tape.json
	.venv/bin/python manage.py bench dashboard --days 1095 --granules 10000000 --reuse --json var/bench-results/dashboard.json
	.venv/bin/python manage.py bench search --granules 10000000 --years 10 --reuse --json var/bench-results/search.json
	.venv/bin/python manage.py bench download --size-mib 1024 --json var/bench-results/download.json
	.venv/bin/python manage.py bench subscriptions --subscriptions 100000 --json var/bench-results/subscriptions.json
	.venv/bin/python manage.py bench mixed --users 100 --granules 1500 --json var/bench-results/mixed.json
	.venv/bin/python manage.py bench stage --files 10000 --volumes 40 --json var/bench-results/stage.json

# Granary under fire (issues #18, #27): 1,000 small granules, 20 of 20-50 MB and one of 1 GB
# ingested into tape-only and bucket+tape collections while processes are killed, the broker and
# database restarted, drives fail, the S3 server is late, killed -9 and given other keys, a
# bucket is missing and bytes are damaged (objects too), on a PostgreSQL, RabbitMQ and S3 server
# the run starts itself. Prints a table; non-zero unless nothing lost and every S3 fault showed
# its reason. The issue's 5 GB object: add --big-object-gb 5. On SCSI tape (tgt's virtual
# library started and stopped by the run, killed -9 mid-write): GRANARY_TAPE=scsi make chaos, or
# manage.py chaos --tape scsi [--iscsi-port N].
chaos: setup
	.venv/bin/python manage.py chaos --json var/bench-results/chaos.json

# The short chaos run as a test (about 200 granules, 5 kills, one broker and database restart,
# the S3 server late and killed -9, a missing bucket, an object deleted and one changed).
chaos-short: setup
	.venv/bin/pytest -q tests/integration/test_chaos.py

# Several hosts (issue #22): web, a worker per queue and a storage manager per silo in network
# namespaces on their own PostgreSQL and RabbitMQ; a client's ingest, tape recall and download,
# then one silo's storage manager host down and back. Needs root; non-zero on any failed check.
cluster: setup
	scripts/cluster.sh
