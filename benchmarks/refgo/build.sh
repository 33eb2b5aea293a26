#!/usr/bin/env bash
# Builds wlmap-refgo, the harness that runs workloads through the reference Go library
# (github.com/run-ai/karta at the version KAI Scheduler pins), into the cache outside the
# checkout. Idempotent: nothing is rebuilt while the binary is newer than every source.
# Prints the binary's path on stdout; diagnostics go to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${WLMAP_CACHE:-$HOME/.cache/workload-map}"
bin="$cache/bin/wlmap-refgo"

if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain ('go') is not on PATH; wlmap-refgo (the reference-library" \
       "harness under benchmarks/refgo) needs Go >= 1.26.3 and the Go module proxy" >&2
  exit 3
fi

newest_source="$(find "$here" -maxdepth 1 \( -name '*.go' -o -name 'go.mod' -o -name 'go.sum' \) -newer "$bin" 2>/dev/null | head -n 1 || true)"
if [[ -x "$bin" && -z "$newest_source" ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache/bin"
# The checksum database does not list the pinned reference pseudo-version (its lookup
# answers 404); go.sum, committed beside go.mod, pins every module's hash instead.
export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/run-ai/karta"
export GOFLAGS="${GOFLAGS:-} -mod=readonly -buildvcs=false"
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# -p 1: the build machine's cores are shared; one package at a time keeps it polite.
(cd "$here" && go build -p 1 -trimpath -o "$tmp" .)
mv -f "$tmp" "$bin"
echo "$bin"
