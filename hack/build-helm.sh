#!/usr/bin/env bash
# Builds helm (helm.sh/helm/v3 at a pinned release) from its Go module for the chart tests
# (`helm lint`, `helm template`), into the same cache as hack/build-apiserver.sh.
#
# Helm's module has no replace directives, so `go install module/cmd/helm@version` works; the
# version is stamped the way Helm's own Makefile does (else `helm version` says "v3.x+unreleased"
# and the default kubeVersion of `helm template` would be the client library's guess).
# A second run with the binary present and reporting the pinned version is a no-op.
#
# Environment: WLMAP_CACHE (cache root), WLMAP_HELM_VERSION (default below), WLMAP_BUILD_JOBS
# (default 1 on shared development machines, all cores when CI=true).
#
# `--download-only` fetches the modules the build needs into GOMODCACHE and compiles nothing
# (`go install -n` resolves and downloads, then only prints the build plan): a cold CI run can
# start it in the background while the CPU-bound kube build runs, so that the helm step later
# only compiles. It takes no build lock: the module cache has its own locking.
set -euo pipefail

HELM_VERSION="${WLMAP_HELM_VERSION:-v3.22.0}"
# The Kubernetes release `helm template` assumes when no cluster is asked (our test harness's).
KUBE_VERSION="${WLMAP_KUBE_VERSION:-v1.37.2}"
CACHE="${WLMAP_CACHE:-$HOME/.cache/workload-map}"
BIN="$CACHE/bin"
if [[ "${CI:-}" == true ]]; then JOBS="${WLMAP_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"
else JOBS="${WLMAP_BUILD_JOBS:-1}"; fi

die() { echo "build-helm: $*" >&2; exit 1; }
log() { echo "build-helm: $*" >&2; }

[[ "$HELM_VERSION" =~ ^v3\.[0-9]+\.[0-9]+$ ]] || die "WLMAP_HELM_VERSION must look like v3.22.0, got '$HELM_VERSION'"
[[ "$KUBE_VERSION" =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || die "WLMAP_KUBE_VERSION must look like v1.37.2, got '$KUBE_VERSION'"
KUBE_MINOR="${BASH_REMATCH[1]}"

DOWNLOAD_ONLY=false
case "${1:-}" in
    "") ;;
    --download-only) DOWNLOAD_ONLY=true ;;
    *) echo "build-helm: unknown argument '$1' (only --download-only)" >&2; exit 2 ;;
esac

helm_ok() { [[ -x "$BIN/helm" ]] && [[ "$("$BIN/helm" version --template '{{.Version}}' 2>/dev/null)" == "$HELM_VERSION" ]]; }

if helm_ok; then
    log "helm $HELM_VERSION already in $BIN"
    exit 0
fi

command -v go >/dev/null 2>&1 || die "the Go toolchain is missing (needed once to build helm for the chart
tests). Install Go >= 1.24 from https://go.dev/dl or your package manager, then run 'make helm' again."

mkdir -p "$BIN" "$CACHE/src"
cd "$CACHE/src"
if [[ "$DOWNLOAD_ONLY" == true ]]; then
    start=$SECONDS
    GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="-buildvcs=false" \
        go install -n "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" 2>/dev/null ||
        die "could not download the modules of helm $HELM_VERSION (is the Go module proxy reachable?)"
    log "modules of helm $HELM_VERSION downloaded in $((SECONDS - start)) s"
    exit 0
fi
exec 9>"$CACHE/.build-helm.lock"
flock 9
helm_ok && { log "helm $HELM_VERSION already in $BIN"; exit 0; }  # built while we waited

export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" CGO_ENABLED=0 GOFLAGS="-buildvcs=false" GOMAXPROCS="$JOBS"
start=$SECONDS
v=helm.sh/helm/v3/internal/version
ld="-s -w -X $v.version=$HELM_VERSION -X $v.metadata= -X $v.gitCommit=module-$HELM_VERSION -X $v.gitTreeState=clean"
# Helm's Makefile stamps the Kubernetes version its client libraries speak into these two packages.
for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ld+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$KUBE_MINOR"
done
log "building helm $HELM_VERSION with -p $JOBS (module download + compile, a few minutes)"
rm -rf "$BIN/.helm.tmp" && mkdir -p "$BIN/.helm.tmp"
GOBIN="$BIN/.helm.tmp" nice -n 10 go install -p "$JOBS" -trimpath -ldflags "$ld" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
mv -f "$BIN/.helm.tmp/helm" "$BIN/helm"
rmdir "$BIN/.helm.tmp"
helm_ok || die "built helm does not report $HELM_VERSION: $("$BIN/helm" version 2>&1 | head -n1)"
log "helm $("$BIN/helm" version --short) in $((SECONDS - start)) s"
