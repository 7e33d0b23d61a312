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

stamp="node_modules/.installed-$(sha1sum package-lock.json | cut -c1-12)"
if [[ ! -f $stamp ]]; then
  echo "Installing npm packages ..."
  npm ci --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi
echo "Building the web app ..."
npm run --silent build >/dev/null

.venv/bin/python manage.py migrate --noinput -v0
