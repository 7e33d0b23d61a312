#!/usr/bin/env bash
# Browser journeys: a live Granary (gunicorn + worker) on a throw-away database and data root,
# driven by Playwright in Debian's Chromium. Screenshots land in var/screenshots/.
# `scripts/e2e.sh [FILE...]` runs only those journeys; E2E_PORT and E2E_DB keep parallel runs apart.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT=${E2E_PORT:-8765}
export GRANARY_DATA_ROOT
GRANARY_DATA_ROOT=$(mktemp -d /tmp/granary-e2e.XXXXXX)
# Write batches at once instead of waiting for a fuller tape, so the demo granules reach tape
# (and the dashboards' migrate figures) before the journeys look.
export GRANARY_WRITE_MAX_WAIT_S=0
# The journeys log in more often than a person would; the login throttle is tested in pytest.
export GRANARY_LOGIN_RATE=${GRANARY_LOGIN_RATE:-1000/min}
# The webhook journey's receiver listens on loopback, which webhooks may reach only when allowed.
export GRANARY_EVENTS_ALLOWED_NETS=${GRANARY_EVENTS_ALLOWED_NETS:-127.0.0.1/32}
# E2E_VHOST: a RabbitMQ vhost of the journeys' own (created here), so that their purge and
# worker never meet the queues of a test pass running beside them on the same broker.
if [[ "${CELERY_BROKER_URL:-}" == amqp* && -n "${E2E_VHOST:-}" ]]; then
  rabbitmqctl -q add_vhost "$E2E_VHOST" >/dev/null 2>&1 || true
  rabbitmqctl -q set_permissions -p "$E2E_VHOST" guest ".*" ".*" ".*" >/dev/null
  export CELERY_BROKER_URL
  CELERY_BROKER_URL=$(sed -E "s#^(amqp://[^/]+)/.*#\1/$E2E_VHOST#" <<< "$CELERY_BROKER_URL")
fi
if [[ "${DATABASE_URL:-}" == postgres* ]]; then
  export DATABASE_URL="${DATABASE_URL%/*}/${E2E_DB:-granary_e2e}"
  $PY scripts/pg_recreate.py "$DATABASE_URL"
else
  unset DATABASE_URL
fi

cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  # the S3 server was started by scripts/s3-server.sh, not as a job of this script
  [[ -f $GRANARY_DATA_ROOT/log/s3-server.pid ]] && kill "$(cat "$GRANARY_DATA_ROOT/log/s3-server.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$GRANARY_DATA_ROOT"
}
trap cleanup EXIT

# A demo collection keeps copy 1 in the object store: a local S3 server beside the journeys'.
source scripts/object-store.sh
mkdir -p "$GRANARY_DATA_ROOT/log"
start_object_store "${E2E_S3_PORT:-$((PORT + 1))}" "$GRANARY_DATA_ROOT"

# An OpenID provider (scripts/oidc-provider.mjs) the sign-in journey signs in through: olga is
# in the group operators map to the operator role.
OIDC_PORT=${E2E_OIDC_PORT:-$((PORT + 2))}
$PY -c "import json, sys; from joserfc.jwk import RSAKey; print(json.dumps(RSAKey.generate_key(
    2048, parameters={'kid': 'e2e', 'alg': 'RS256', 'use': 'sig'}, private=True).as_dict(
    private=True)))" > "$GRANARY_DATA_ROOT/oidc-key.json"
export GRANARY_OIDC_ISSUER="http://127.0.0.1:$OIDC_PORT" GRANARY_OIDC_CLIENT_ID=granary \
  GRANARY_OIDC_CLIENT_SECRET=e2e-secret GRANARY_OIDC_AUDIENCE=urn:granary \
  GRANARY_OIDC_NAME="Test IdP" GRANARY_OIDC_ROLE_RULES="granary-operators=operator"
node scripts/oidc-provider.mjs --port "$OIDC_PORT" --key "$GRANARY_DATA_ROOT/oidc-key.json" \
  --secret e2e-secret --audience urn:granary --users '{"olga": ["granary-operators"]}' \
  --redirect "http://127.0.0.1:$PORT/api/v1/auth/oidc/callback/" \
  >"$GRANARY_DATA_ROOT/oidc-provider.log" 2>&1 &

$PY manage.py migrate --noinput -v0
# Drop nudges earlier runs left on a shared broker *before* seed_demo queues the demo's ingest.
if [[ "${CELERY_BROKER_URL:-}" == amqp* ]]; then
  $PY -m celery -A backend purge -f -Q ingest,archive,distribution,events,fanout,transform,default >/dev/null || true
fi
$PY manage.py seed_demo --history >/dev/null
$PY -m celery -A backend worker -Q ingest,archive,distribution,events,fanout,transform,default --concurrency 2 \
  -n "e2e@%h" -l WARNING --logfile "$GRANARY_DATA_ROOT/worker.log" &
# Beat, as in production: it wakes recalls that waited to gather a batch and settles orders.
$PY -m celery -A backend beat -l WARNING --logfile "$GRANARY_DATA_ROOT/beat.log" \
  --schedule "$GRANARY_DATA_ROOT/celerybeat-schedule" &
.venv/bin/gunicorn backend.wsgi:application --bind "127.0.0.1:$PORT" --worker-class gthread \
  --workers 2 --threads 4 --error-logfile "$GRANARY_DATA_ROOT/web.log" &
for _ in $(seq 60); do
  curl -fsS "http://127.0.0.1:$PORT/api/health/" >/dev/null 2>&1 && break
  sleep 0.5
done

status=0
if (($#)); then
  GRANARY_URL="http://127.0.0.1:$PORT" node --test "$@" || status=$?
else
  GRANARY_URL="http://127.0.0.1:$PORT" npm run --silent e2e || status=$?
fi
if ((status)); then
  echo "--- web log ---"; tail -50 "$GRANARY_DATA_ROOT/web.log" || true
  echo "--- worker log ---"; tail -50 "$GRANARY_DATA_ROOT/worker.log" || true
  echo "--- beat log ---"; tail -20 "$GRANARY_DATA_ROOT/beat.log" || true
fi
exit $status
