# Sourced by run.sh and e2e.sh: start an S3-compatible server (rclone serve s3) on 127.0.0.1:$1
# serving "$GRANARY_DATA_ROOT/objects", and point Granary's object store at it. The keys are made
# once per data root and kept beside it (0600), so a restart finds its objects again. The server
# is a job of the calling script: its Ctrl-C / cleanup stops it with the rest.
start_object_store() {
  local port=$1 data=$2 keys="$2/s3-credentials"
  if [[ ! -f $keys ]]; then
    (umask 077; printf 'granary-%s %s\n' "$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
      "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$keys")
  fi
  read -r GRANARY_S3_ACCESS_KEY GRANARY_S3_SECRET_KEY <"$keys"
  export GRANARY_S3_ACCESS_KEY GRANARY_S3_SECRET_KEY
  export GRANARY_S3_ENDPOINT="http://127.0.0.1:$port"
  scripts/s3-server.sh "$data/objects" "$port" "$GRANARY_S3_ACCESS_KEY" \
    "$GRANARY_S3_SECRET_KEY" "$data/log/s3-server.pid"
}
