#!/usr/bin/env bash
# A virtual tape library on loopback: tgt's userspace SCSI target with N SSC tape drives and an
# SMC changer holding M labelled cartridges, reached over iSCSI (libiscsi) by the SCSI tape medium.
#
#   scripts/tape-library.sh start DIR [PORT] [DRIVES] [CARTRIDGES] [PREFIX] [SIZE_MB]
#
# CARTRIDGES is a count (barcodes PREFIX00001, PREFIX00002, ...: the labels Granary gives the
# volumes it labels with that prefix) or a comma-separated list of barcodes.
#   scripts/tape-library.sh stop DIR
#   scripts/tape-library.sh status DIR
#
# start prints the library's settings as shell assignments (also kept in DIR/library.env):
# GRANARY_SCSI_PORTAL, GRANARY_SCSI_TARGET, GRANARY_SCSI_CHANGER_LUN, GRANARY_SCSI_DRIVE_LUNS,
# GRANARY_SCSI_MEDIA (where the cartridges' backing files are, by barcode) and the daemon's PID.
# Drive i is LUN 1+i and data-transfer element 500+i-1; cartridge j sits in storage slot 1000+j-1, its backing file DIR/media/BARCODE. The drives start empty: the changer's
# MOVE MEDIUM loads them. tgtd ignores SIGTERM: stop deletes the target and the system through
# the daemon's own control port, waits for the PID, and kills only that PID if it lingers.
set -euo pipefail

cmd=${1:?usage: tape-library.sh start|stop|status DIR ...}
dir=${2:?a directory for the library}
port=${3:-3270}
drives=${4:-2}
carts=${5:-4}
prefix=${6:-A}
size_mb=${7:-1024}
iqn="iqn.2026-11.org.granary:vtl-${port}"
if [[ $cmd == start ]] && ! { [[ $port =~ ^[0-9]+$ ]] && ((port >= 1 && port <= 32767)); }; then
  # the port is tgtd's control socket number too, which it takes only up to 32767
  echo "tape-library.sh: the port is 1..32767 (tgtd's control number is the same), not $port" >&2
  exit 2
fi
tid=1

adm() { tgtadm -C "$(cat "$dir/control")" --lld iscsi "$@"; }

start() {
  mkdir -p "$dir/media"
  dir=$(cd "$dir" && pwd)
  if [[ -f "$dir/tgtd.pid" ]] && kill -0 "$(cat "$dir/tgtd.pid")" 2>/dev/null; then
    cat "$dir/library.env"; return
  fi
  echo "$port" >"$dir/control"   # tgtd's control socket number: one per library
  setsid tgtd -f -C "$port" --iscsi "portal=127.0.0.1:$port" >"$dir/tgtd.log" 2>&1 &
  echo $! >"$dir/tgtd.pid"
  for _ in $(seq 100); do
    adm --mode target --op show >/dev/null 2>&1 && break
    sleep 0.1
  done
  adm --mode target --op new --tid $tid --targetname "$iqn"
  : >"$dir/smc"
  adm --mode logicalunit --op new --tid $tid --lun 1 --device-type changer --bstype smc \
      --backing-store "$dir/smc"
  local luns=() i
  for ((i = 1; i <= drives; i++)); do
    # an empty drive: tgt needs a backing store to create the LUN, the changer replaces it
    : >"$dir/empty-$i"
    adm --mode logicalunit --op new --tid $tid --lun $((1 + i)) --device-type tape \
        --bstype ssc --backing-store "$dir/empty-$i" >/dev/null 2>&1 ||
      adm --mode logicalunit --op new --tid $tid --lun $((1 + i)) --device-type tape --bstype ssc
    luns+=($((1 + i)))
  done
  u() { adm --mode logicalunit --op update --tid $tid --lun 1 --params "$1"; }
  u element_type=1,start_address=1,quantity=1
  local codes=()
  if [[ "$carts" =~ ^[0-9]+$ ]]; then
    for ((i = 1; i <= carts; i++)); do codes+=("$(printf '%s%05d' "$prefix" "$i")"); done
  else
    IFS=, read -r -a codes <<<"$carts"
  fi
  u element_type=2,start_address=1000,quantity="${#codes[@]}"
  u element_type=3,start_address=10,quantity=1
  u element_type=4,start_address=500,quantity="$drives"
  u media_home="$dir/media"
  for ((i = 1; i <= ${#codes[@]}; i++)); do
    local code=${codes[i - 1]}
    [[ -f "$dir/media/$code" ]] || tgtimg --op new --device-type tape --barcode "$code" \
        --size "$size_mb" --type data --file "$dir/media/$code" >/dev/null
    u element_type=2,address=$((999 + i)),barcode="$code",sides=1
  done
  for ((i = 1; i <= drives; i++)); do
    u element_type=4,address=$((499 + i)),tid=$tid,lun=$((1 + i))
  done
  adm --mode target --op bind --tid $tid -I ALL
  {
    echo "GRANARY_SCSI_PORTAL=127.0.0.1:$port"
    echo "GRANARY_SCSI_TARGET=$iqn"
    echo "GRANARY_SCSI_CHANGER_LUN=1"
    echo "GRANARY_SCSI_DRIVE_LUNS=$(IFS=,; echo "${luns[*]}")"
    echo "GRANARY_SCSI_MEDIA=$dir/media"
    echo "TGTD_PID=$(cat "$dir/tgtd.pid")"
  } >"$dir/library.env"
  cat "$dir/library.env"
}

stop() {
  [[ -f "$dir/tgtd.pid" ]] || return 0
  local pid
  pid=$(cat "$dir/tgtd.pid")
  if kill -0 "$pid" 2>/dev/null; then
    adm --mode target --op delete --force --tid $tid >/dev/null 2>&1 || true
    tgtadm -C "$(cat "$dir/control")" --mode system --op delete >/dev/null 2>&1 || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/tgtd.pid"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) [[ -f "$dir/tgtd.pid" ]] && kill -0 "$(cat "$dir/tgtd.pid")" && cat "$dir/library.env" ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
