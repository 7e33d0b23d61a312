#!/usr/bin/env bash
# Real traffic on a running Granary (the demo install), so every dashboard shows figures from
# bytes that really moved:
#  1. the provider (modaps) uploads new MOD021KM granules over the API and submits them as a bulk
#     ingest request, one of them declared with a wrong checksum, which fails as it would in
#     production and shows on the Failures dashboard with its reason;
#  2. the scientist waits for archived granules, orders a few, waits until the order is ready,
#     downloads every file with curl through its signed link and compares it with the catalog
#     checksum.
#
#   scripts/demo-traffic.sh [BASE_URL] [GRANULES]     (default http://127.0.0.1:$PORT, 12)
#
# DEMO_DELIVER=N granules delivered in step 1 (default 6; 0 skips it); DEMO_DOWNLOADS keeps the
# downloads in that folder (default: a temporary one, removed). Exits non-zero when a checksum
# differs or something never finishes within DEMO_WAIT_S (300).
set -euo pipefail
BASE=${1:-http://127.0.0.1:${PORT:-8000}}
BASE=${BASE%/}
COUNT=${2:-12}
DELIVER=${DEMO_DELIVER:-6}
WAIT_S=${DEMO_WAIT_S:-300}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
downloads=${DEMO_DOWNLOADS:-$work/downloads}
jar=

csrf() { awk '$6 == "csrftoken" {print $7}' "$jar" 2>/dev/null || true; }

api() {  # METHOD PATH [JSON BODY]: the API as the logged-in user (session cookie + CSRF token)
  curl -fsS -b "$jar" -c "$jar" -X "$1" -H 'Accept: application/json' \
    -H 'Content-Type: application/json' -H "X-CSRFToken: $(csrf)" ${3:+--data "$3"} "$BASE$2"
}

log_in() {  # USER PASSWORD: a fresh session in its own cookie jar
  jar=$work/$1.cookies
  api POST /api/v1/auth/login/ "$(jq -nc --arg u "$1" --arg p "$2" \
    '{username: $u, password: $p}')" >/dev/null
}

until_true() {  # SECONDS WHAT COMMAND...: retry COMMAND every 2 s until it succeeds
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    if ((SECONDS >= deadline)); then
      echo "demo-traffic: $what did not happen within $WAIT_S s" >&2
      return 1
    fi
    sleep 2
  done
}

# --- 1. the provider delivers ---------------------------------------------------------------

request_done() {
  api GET "/api/v1/ingest/requests/$request/?granules=0" >"$work/request.json"
  [[ $(jq -r .state "$work/request.json") == completed || \
     $(jq -r .state "$work/request.json") == failed ]]
}

deliver() {
  log_in modaps granary-provider
  local stamp now i name start size md5 declared specs=()
  stamp=$(date -u +%Y%j%H%M%S)
  now=$(date -u +%s)
  for ((i = 0; i < DELIVER; i++)); do
    start=$((now - (DELIVER - i) * 300))
    name="MOD021KM.A$(date -u -d "@$start" +%Y%j.%H%M).061.$stamp.hdf"
    head -c $((3000000 + RANDOM * 30)) /dev/urandom >"$work/$name"
    size=$(stat -c %s "$work/$name")
    md5=$(md5sum "$work/$name" | cut -d' ' -f1)
    curl -fsS -b "$jar" -X PUT -H "X-CSRFToken: $(csrf)" -H 'X-Checksum-Type: MD5' \
      -H "X-Checksum: $md5" -H 'Content-Type: application/octet-stream' \
      --data-binary "@$work/$name" "$BASE/api/v1/ingest/uploads/demo-traffic/$name" >/dev/null
    declared=$md5
    ((i == DELIVER - 1)) && declared=$(echo "not $name" | md5sum | cut -d' ' -f1)
    specs+=("$(jq -nc --arg id "${name%.hdf}" --arg name "$name" --argjson size "$size" \
      --arg md5 "$declared" --arg start "$(date -u -d "@$start" +%FT%TZ)" \
      --arg stop "$(date -u -d "@$((start + 300))" +%FT%TZ)" \
      '{collection: "MOD021KM.061", granule_id: $id,
        temporal: {start: $start, "end": $stop}, bbox: [-20, 10, 5, 30],
        files: [{name: $name, path: ("demo-traffic/" + $name), size: $size,
                 checksum_type: "MD5", checksum: $md5}]}')")
  done
  request=$(api POST /api/v1/ingest/requests/ \
    "$(printf '%s\n' "${specs[@]}" | jq -sc '{granules: .}')" | jq -r .id)
  echo "modaps uploaded $DELIVER granules and submitted ingest request $request" \
    "(the last one declared with a wrong checksum); waiting for it ..."
  until_true "$WAIT_S" "ingest request $request" request_done
  jq -r '"  request \(.id): \(.state), \(.archived_count) archived, \(.failed_count) failed"' \
    "$work/request.json"
  api GET "/api/v1/ingest/requests/$request/?state=failed" |
    jq -r '.granules[] | "  failed: \(.granule_id): \(.disposition): \(.reason)"'
}

# --- 2. the scientist orders and downloads ---------------------------------------------------

archived_enough() {
  # a page holds 10 to 500 granules; the first COUNT are ordered
  api GET "/api/v1/granules/?state=archived&limit=$((COUNT < 10 ? 10 : COUNT))" \
    >"$work/granules.json" &&
    (($(jq '.results | length' "$work/granules.json") >= COUNT))
}

order_ready() {
  api GET "/api/v1/orders/$order/" >"$work/order.json"
  local state
  state=$(jq -r .state "$work/order.json")
  case $state in
    ready | partially_ready) return 0 ;;
    failed | cancelled | expired) echo "demo-traffic: order $order is $state" >&2; exit 1 ;;
    *) return 1 ;;
  esac
}

download() {
  log_in scientist granary-scientist
  echo "scientist: waiting for $COUNT archived granules ..."
  until_true "$WAIT_S" "$COUNT archived granules" archived_enough
  local ids
  ids=$(jq -c "[.results[:$COUNT][].id]" "$work/granules.json")
  order=$(api POST /api/v1/orders/ "{\"granules\": $ids, \"delivery\": \"https\"}" | jq -r .id)
  echo "scientist ordered granules $ids as order $order; waiting until it is ready ..."
  until_true "$WAIT_S" "order $order ready" order_ready

  api GET "/api/v1/orders/$order/links/" >"$work/links.json"
  mkdir -p "$downloads"
  local files=0 bytes=0 url granule name size kind checksum target got
  while IFS=$'\t' read -r url granule name size kind checksum; do
    target="$downloads/$granule/$name"
    mkdir -p "$(dirname "$target")"
    curl -fsS -o "$target" "$url"
    case $kind in
      MD5) got=$(md5sum "$target" | cut -d' ' -f1) ;;
      SHA256) got=$(sha256sum "$target" | cut -d' ' -f1) ;;
      *) echo "demo-traffic: cannot check a $kind checksum with coreutils: $name" >&2; exit 1 ;;
    esac
    if [[ $got != "$checksum" ]] || (($(stat -c %s "$target") != size)); then
      echo "demo-traffic: $name does not match the catalog ($kind $got, want $checksum)" >&2
      exit 1
    fi
    files=$((files + 1)) bytes=$((bytes + size))
    printf '  %-64s %9s B  %s ok\n' "$name" "$size" "$kind"
  done < <(jq -r '.links[] | [.url, .granule, .name, .size, .checksum_type, .checksum] | @tsv' \
    "$work/links.json")
  ((files > 0)) || { echo "demo-traffic: order $order has no download links" >&2; exit 1; }
  echo "Downloaded $files files ($bytes bytes) of order $order with curl; every checksum matches."
}

((DELIVER > 0)) && deliver
download
