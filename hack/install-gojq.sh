#!/usr/bin/env bash
# Installs the jq oracle, gojq v0.12.18 (the version the reference pins), into the cache's bin dir.
# Idempotent: does nothing when that binary already reports the pinned version.
set -euo pipefail

VERSION="0.12.18"
CACHE="${WLMAP_CACHE:-$HOME/.cache/workload-map}"
BIN="$CACHE/bin"
TARGET="$BIN/gojq"

if [[ -x "$TARGET" ]] && "$TARGET" --version 2>/dev/null | grep -q "gojq $VERSION"; then
  exit 0
fi

if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-gojq: 'go' is not on PATH; install Go (https://go.dev/dl/) to build gojq v$VERSION," >&2
  echo "install-gojq: or put a gojq $VERSION binary at $TARGET" >&2
  exit 1
fi

mkdir -p "$BIN"
echo "install-gojq: building gojq v$VERSION into $BIN" >&2
GOBIN="$BIN" GOFLAGS="${GOFLAGS:-} -mod=mod" go install "github.com/itchyny/gojq/cmd/gojq@v$VERSION"

if ! "$TARGET" --version 2>/dev/null | grep -q "gojq $VERSION"; then
  echo "install-gojq: $TARGET does not report version $VERSION" >&2
  exit 1
fi
