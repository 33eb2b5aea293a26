#!/usr/bin/env bash
# Fetches the Prometheus Operator's published CRDs (ServiceMonitor, PrometheusRule) for the
# chart tests, which strict-decode our rendered objects against them on the real API server.
# No Prometheus Operator can run here; its CRDs come from its Go module (the module proxy is the
# one source of another project's files this machine reaches), pinned, cached outside the
# checkout. A no-op when both files are present.
#
# Environment: WLMAP_CACHE (cache root), WLMAP_PROMETHEUS_OPERATOR_VERSION (default below).
set -euo pipefail

VERSION="${WLMAP_PROMETHEUS_OPERATOR_VERSION:-v0.85.0}"
CACHE="${WLMAP_CACHE:-$HOME/.cache/workload-map}"
DEST="$CACHE/crds/prometheus-operator-$VERSION"
FILES=(monitoring.coreos.com_servicemonitors.yaml monitoring.coreos.com_prometheusrules.yaml)

log() { echo "fetch-monitoring-crds: $*" >&2; }

if [[ -f "$DEST/${FILES[0]}" && -f "$DEST/${FILES[1]}" ]]; then
    log "CRDs of prometheus-operator $VERSION already in $DEST"
    exit 0
fi
command -v go >/dev/null 2>&1 || { log "the Go toolchain is missing (needed once to fetch the CRDs)"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"  # outside any module
dir="$(GOFLAGS=-mod=mod go mod download -json "github.com/prometheus-operator/prometheus-operator@$VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
[[ -d "$dir/example/prometheus-operator-crd" ]] || { log "module $VERSION has no example/prometheus-operator-crd"; exit 1; }
mkdir -p "$DEST"
for f in "${FILES[@]}"; do cp "$dir/example/prometheus-operator-crd/$f" "$DEST/$f"; done
chmod -R u+w "$DEST"
log "CRDs of prometheus-operator $VERSION in $DEST"
