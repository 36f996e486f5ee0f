#!/usr/bin/env bash
# Set up (scripts/bootstrap.sh), then run the whole test suite on the real engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh --dev
export TETHER_REQUIRE_DOCKER="${TETHER_REQUIRE_DOCKER:-1}"
exec .venv/bin/python -m pytest -q "$@"
