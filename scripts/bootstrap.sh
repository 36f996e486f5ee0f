#!/usr/bin/env bash
# Set up everything Tether needs on a Debian/Ubuntu machine, idempotently:
# Debian's docker.io and image-building tools, a running Docker engine,
# a virtual environment in .venv with Tether installed, the sandbox image.
# Dev tools (`--dev`; scripts/test.sh asks for them; not a TETHER_* variable,
# since those are read as configuration keys):
# Debian's chromium, which the report tests open pages in.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
[ -x /bin/busybox ] || need+=(busybox-static)
[ -x /bin/bash-static ] || need+=(bash-static)
python3 -m venv --help >/dev/null 2>&1 || need+=(python3-venv)
if [ "${1:-}" = "--dev" ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    $SUDO systemctl start docker || true
  fi
fi
if ! docker info >/dev/null 2>&1; then
  echo "bootstrap: starting dockerd (log: /tmp/tether-dockerd.log)" >&2
  $SUDO sh -c 'nohup dockerd --bridge=none --iptables=false --ip-masq=false --ip6tables=false >/tmp/tether-dockerd.log 2>&1 &'
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "bootstrap: dockerd did not start; see /tmp/tether-dockerd.log" >&2; exit 1; }
fi

if [ ! -x .venv/bin/tether ] || [ pyproject.toml -nt .venv/.installed ]; then
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip >/dev/null
  .venv/bin/pip install -q -e '.[dev]'
  touch .venv/.installed
fi

.venv/bin/tether sandbox build
