#!/usr/bin/env bash
# Starts Granary on this machine: web (gunicorn), a worker on every queue, beat and a local S3
# object store. Ctrl-C stops them all. Settings come from the environment (see deploy/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT=${PORT:-8000}
DATA_ROOT=$($PY -c 'import django,os;os.environ.setdefault("DJANGO_SETTINGS_MODULE","backend.settings");django.setup();from django.conf import settings;print(settings.DATA_ROOT)')
LOGS="$DATA_ROOT/log"
mkdir -p "$LOGS"
trap 'trap - EXIT INT TERM; kill 0 2>/dev/null; wait' EXIT INT TERM

# The object store (copy 1 of a demo collection lives there): a local S3 server, S3_PORT.
S3_PORT=${S3_PORT:-9000}
source scripts/object-store.sh
start_object_store "$S3_PORT" "$DATA_ROOT"

# GRANARY_TAPE=scsi: the volumes are cartridges of tgt's virtual tape library on loopback
# (GRANARY_SCSI_PORT, 3270 by default), one per demo volume, stopped with the rest.
if [[ "${GRANARY_TAPE:-}" == scsi ]]; then
  vtl="$DATA_ROOT/vtl"
  codes=$(printf 'A%05d,' $(seq 8); printf 'B%05d,' $(seq 8))
  trap 'trap - EXIT INT TERM; scripts/tape-library.sh stop "$vtl"; kill 0 2>/dev/null; wait' \
    EXIT INT TERM
  while IFS='=' read -r key value; do
    [[ $key == GRANARY_SCSI_* ]] && export "$key=$value"
  done < <(scripts/tape-library.sh start "$vtl" "${GRANARY_SCSI_PORT:-3270}" 4 "${codes%,}" A \
           6000)
  export GRANARY_SCSI_CHANGER=$GRANARY_SCSI_CHANGER_LUN GRANARY_SCSI_DRIVES=$GRANARY_SCSI_DRIVE_LUNS
fi

logins=$($PY manage.py seed_demo --history)

# The worker lowers its own CPU priority (GRANARY_WORKER_NICE, 10 by default): the web comes
# first (deploy/README.md).
$PY -m celery -A backend worker -Q ingest,archive,distribution,events,fanout,transform,default --concurrency 2 \
  -n "granary@%h" -l INFO --logfile "$LOGS/worker.log" &
$PY -m celery -A backend beat -l INFO --logfile "$LOGS/beat.log" \
  --schedule "$DATA_ROOT/celerybeat-schedule" &
.venv/bin/gunicorn backend.wsgi:application --bind "127.0.0.1:$PORT" --worker-class gthread \
  --workers 2 --threads 4 --timeout 300 --access-logfile "$LOGS/access.log" \
  --error-logfile "$LOGS/web.log" &
# The provider API in a gunicorn of its own, PROVIDER_PORT (deploy/README.md, "The web comes
# first"): providers' bulk requests and PDRs never wait in the portal users' queue. The portal's
# port answers the provider API too (there is no nginx here to route it).
PROVIDER_PORT=${PROVIDER_PORT:-$((PORT + 1))}
GRANARY_WEB_POOL=provider GRANARY_PROVIDER_BIND="127.0.0.1:$PROVIDER_PORT" GRANARY_PROVIDER_WORKERS=1 \
  .venv/bin/gunicorn -c deploy/gunicorn.conf.py backend.wsgi:application \
  --access-logfile "$LOGS/provider-access.log" --error-logfile "$LOGS/provider.log" &

for _ in $(seq 60); do
  curl -fsS "http://127.0.0.1:$PORT/api/health/" >/dev/null 2>&1 && break
  sleep 0.5
done
# DEMO_TRAFFIC=1: a real delivery, order and download once the demo granules are archived, so
# the dashboards chart real figures (scripts/demo-traffic.sh; its log is in $LOGS).
if [[ "${DEMO_TRAFFIC:-}" == 1 ]]; then
  scripts/demo-traffic.sh "http://127.0.0.1:$PORT" >"$LOGS/demo-traffic.log" 2>&1 &
fi
cat <<TXT

  Granary is running:  http://127.0.0.1:$PORT/
  API docs:            http://127.0.0.1:$PORT/api/docs/
  Provider API:        http://127.0.0.1:$PROVIDER_PORT/api/v1/ingest/   (its own gunicorn)
  Admin:               http://127.0.0.1:$PORT/admin/
  Data root:           $DATA_ROOT   (logs in $LOGS)
  Object store (S3):   $GRANARY_S3_ENDPOINT   (objects in $DATA_ROOT/objects)
  Tape:                ${GRANARY_TAPE:-emulator} ${GRANARY_SCSI_PORTAL:+(iSCSI $GRANARY_SCSI_PORTAL)}

$logins

  Press Ctrl-C to stop web, provider API, worker, beat and the object store.
TXT
wait
