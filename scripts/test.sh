#!/usr/bin/env bash
# The whole test suite: lint, front-end unit tests, pytest (on DATABASE_URL / CELERY_BROKER_URL
# when set, e.g. PostgreSQL + RabbitMQ in CI, and always on the embedded SQLite default too),
# and the browser journeys in Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh --browser

echo "== ruff"
.venv/bin/ruff check .
echo "== import layers (lint-imports)"
.venv/bin/lint-imports --no-cache
echo "== eslint, prettier and the generated API types"
npm run --silent lint
npm run --silent api-types:check
echo "== vitest"
npm test --silent
echo "== pytest on ${DATABASE_URL:-SQLite} with ${CELERY_BROKER_URL:-the file-system broker}"
if [[ -n "${DATABASE_URL:-}${CELERY_BROKER_URL:-}" ]]; then
  # The pass on the embedded default (SQLite, file-system broker) runs beside this one, and
  # the browser journeys follow it there (on a database and a RabbitMQ vhost of their own):
  # they share no database, vhost or temporary folder with this pass, and each waits on
  # workers, browsers and databases as much as it computes. Their output follows this pass's.
  # The chaos run brings its own PostgreSQL and RabbitMQ, so it runs once, in the embedded
  # pass, which is the shorter one; the runs marked `once` (the whole-archive property run,
  # the real clients, the API fuzzing and the virtual tape library) ask the database nothing
  # the other tests do not: each runs once, in this pass. Both passes print their slowest
  # tests, so the next move of a slow one is measured.
  beside=$(mktemp -d)
  # Its own loopback ports for the virtual tape library (this pass takes 3270-3279).
  (
    rc=0
    env -u DATABASE_URL -u CELERY_BROKER_URL GRANARY_TEST_ISCSI_PORT=3280 \
      .venv/bin/pytest -q -m "not slow and not once" --durations=25 \
      --basetemp="$beside/tmp" "$@" > "$beside/embedded.log" 2>&1 || rc=$?
    echo "$rc" > "$beside/embedded.status"
    rc=0
    E2E_VHOST=granary_e2e scripts/e2e.sh > "$beside/journeys.log" 2>&1 || rc=$?
    echo "$rc" > "$beside/journeys.status"
  ) &
  embedded=$!
  trap 'kill "$embedded" 2>/dev/null || true' EXIT
  status=0
  .venv/bin/pytest -m "not slow and not chaos" --durations=25 "$@" || status=$?
  wait "$embedded" || true
  echo "== pytest on the embedded default (SQLite, file-system broker), run beside the pass above"
  cat "$beside/embedded.log"
  echo "== browser journeys (Chromium), run after the embedded pass"
  cat "$beside/journeys.log"
  for part in embedded journeys; do
    part_status=$(cat "$beside/$part.status" 2>/dev/null || echo 1)
    [[ $part_status -eq 0 ]] || status=$part_status
  done
  rm -rf "$beside"
  exit "$status"
fi
.venv/bin/pytest "$@"
echo "== browser journeys (Chromium)"
scripts/e2e.sh
