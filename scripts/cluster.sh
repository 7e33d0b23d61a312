#!/usr/bin/env bash
# Granary as several hosts (network namespaces; the object store, an S3 server, on a host of its
# own) and a journey through them: see bench/cluster/ and deploy/README.md ("Several hosts").
# Needs root (ip netns).
# Usage: scripts/cluster.sh [--net N] [--keep]   (hosts on 10.N.0.0/24, default 77)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) -ne 0 ]]; then
  echo "cluster: network namespaces need root; run: sudo make cluster" >&2
  exit 1
fi
net=77
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ ${args[i]} == --net ]] && net=${args[i + 1]}
done
# whatever way this script ends, nothing of the run stays behind: its namespaces and every
# process in them, its bridge, its PostgreSQL and RabbitMQ
trap '.venv/bin/python manage.py cluster --cleanup --net "$net" || true' EXIT
.venv/bin/python manage.py cluster "$@"
