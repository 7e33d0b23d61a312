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
  # The pass on the embedded default (SQLite, file-system broker) runs beside this one: they
  # share no database, broker or temporary folder, and each waits on workers and databases as
  # much as it computes. Its output follows this pass's. The chaos run brings its own
  # PostgreSQL and RabbitMQ, so it runs once, in that pass, which is the shorter one; the runs
  # marked `once` (the whole-archive property run, the real clients and the virtual tape
  # library) ask the database nothing the other tests do not: each runs once, in this pass.
  # Both passes print their slowest tests, so the next move of a slow one is measured.
  embedded_log=$(mktemp) embedded_tmp=$(mktemp -d)
  # Its own loopback ports for the virtual tape library (this pass takes 3270-3279).
  env -u DATABASE_URL -u CELERY_BROKER_URL GRANARY_TEST_ISCSI_PORT=3280 \
    .venv/bin/pytest -q -m "not slow and not once" --durations=25 \
    --basetemp="$embedded_tmp" "$@" > "$embedded_log" 2>&1 &
  embedded=$!
  trap 'kill "$embedded" 2>/dev/null || true' EXIT
fi
status=0
if [[ -n "${embedded:-}" ]]; then
  .venv/bin/pytest -m "not slow and not chaos" --durations=25 "$@" || status=$?
else
  .venv/bin/pytest "$@" || status=$?
fi
if [[ -n "${embedded:-}" ]]; then
  echo "== pytest on the embedded default (SQLite, file-system broker), run beside the pass above"
  embedded_status=0
  wait "$embedded" || embedded_status=$?
  cat "$embedded_log"
  rm -rf "$embedded_log" "$embedded_tmp"
  [[ $embedded_status -eq 0 ]] || status=$embedded_status
fi
[[ $status -eq 0 ]] || exit "$status"
echo "== browser journeys (Chromium)"
scripts/e2e.sh
