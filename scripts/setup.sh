#!/usr/bin/env bash
# Installs everything Granary needs into this checkout: virtualenv, Python and npm packages, the
# built web app, and the database schema. Re-running it only redoes what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/system-deps.sh "$@"

if [[ ! -x .venv/bin/python ]]; then
  echo "Creating the virtualenv in .venv ..."
  python3 -m venv .venv
fi
stamp=".venv/.installed-$(cat requirements.txt requirements-dev.txt | sha1sum | cut -c1-12)"
if [[ ! -f $stamp ]]; then
  echo "Installing Python packages ..."
  .venv/bin/pip install -q --no-compile --disable-pip-version-check -r requirements-dev.txt
  rm -f .venv/.installed-* && touch "$stamp"
fi
# Python modules compiled here, side by side (9 s the first time, 2 s once up to date; pip's own
# compile took 23): where PYTHONDONTWRITEBYTECODE is set (this machine's environment) nothing
# compiled on import is kept, and every process started (each gunicorn and Celery worker, each
# command a test runs) compiled Django anew, 2.4 s of CPU for a Django start against 0.9.
.venv/bin/python -m compileall -q -j 0 .venv/lib manage.py backend bench console demo deploy \
  distribution ingest scripts > /dev/null

stamp="node_modules/.installed-$(sha1sum package-lock.json | cut -c1-12)"
if [[ ! -f $stamp ]]; then
  echo "Installing npm packages ..."
  npm ci --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi
echo "Building the web app ..."
npm run --silent build >/dev/null

.venv/bin/python manage.py migrate --noinput -v0
