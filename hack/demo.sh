#!/usr/bin/env bash
# `make demo`: describe the bundled example workloads offline (no cluster needed).
# Runs after `make venv` on a fresh machine; uses only .venv/bin/wlmap and examples/.
set -euo pipefail
cd "$(dirname "$0")/.."
WLMAP="${WLMAP:-.venv/bin/wlmap}"
if [[ ! -x "$WLMAP" ]]; then
    echo "demo: $WLMAP not found; run 'make venv' first" >&2
    exit 1
fi

bold="" plain=""
if [[ -t 1 && -z "${NO_COLOR+x}" ]]; then
    bold=$'\033[1m' plain=$'\033[0m'
fi

run() {
    printf '\n%s$ wlmap %s%s\n' "$bold" "$*" "$plain"
    "$WLMAP" "$@"
}

echo "wlmap $("$WLMAP" --version): workload views from Karta definitions, offline on examples/"
run definitions --group jobset.x-k8s.io
run describe -f examples/jobset/jobset.yaml --pods examples/jobset/pods.yaml
run describe -f examples/pytorchjob/pytorchjob.yaml --pods examples/pytorchjob/pods.yaml
run describe -f examples/leaderworkerset/lws.yaml --pods examples/leaderworkerset/pods.yaml
run describe -f examples/raycluster/raycluster.yaml
run describe -f examples/pytorchjob/pytorchjob.yaml --pods examples/pytorchjob/pods.yaml -o json
