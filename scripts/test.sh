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
.venv/bin/pytest "$@"
if [[ -n "${DATABASE_URL:-}${CELERY_BROKER_URL:-}" ]]; then
  echo "== pytest on the embedded default (SQLite, file-system broker)"
  # the chaos run brings its own PostgreSQL and RabbitMQ: it ran in the pass above
  env -u DATABASE_URL -u CELERY_BROKER_URL .venv/bin/pytest -q -m "not slow and not chaos" "$@"
fi
echo "== browser journeys (Chromium)"
scripts/e2e.sh
