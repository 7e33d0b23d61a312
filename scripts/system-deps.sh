#!/usr/bin/env bash
# Installs the Debian packages Granary needs when they are missing (run as root, or it prints the
# apt line to run). Usage: scripts/system-deps.sh [--browser]
set -euo pipefail

need=()
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v make >/dev/null || need+=(make)
# the virtual tape library (tgt) and the iSCSI initiator library the SCSI tape medium drives
command -v tgtd >/dev/null || need+=(tgt)
ldconfig -p 2>/dev/null | grep -q 'libiscsi\.so\.7' || need+=(libiscsi7)
command -v iscsi-inq >/dev/null || need+=(libiscsi-bin)
# gfal2 over HTTP, the grid client the Tape REST API tests stage with (system python's binding)
/usr/bin/python3 -c 'import gfal2' 2>/dev/null || need+=(gfal2 gfal2-plugin-http python3-gfal2)
ls /usr/lib/*/gfal2-plugins/libgfal_plugin_http.so >/dev/null 2>&1 || need+=(gfal2-plugin-http)
if [[ "${1:-}" == "--browser" ]]; then
  [[ -x /usr/bin/chromium ]] || need+=(chromium)
fi
((${#need[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "Granary needs these Debian packages: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
echo "Installing ${need[*]} ..."
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
