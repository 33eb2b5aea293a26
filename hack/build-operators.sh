#!/usr/bin/env bash
# Builds the real operators and the second scheduler that the gang end-to-end tests run beside
# the harness's control plane (tests/integration/test_gangs_real_*.py), from their Go modules,
# into the cache of hack/build-apiserver.sh:
#
#   kuberay            github.com/ray-project/kuberay/ray-operator   -> bin/kuberay-operator
#   training-operator  github.com/kubeflow/training-operator         -> bin/training-operator
#   scheduler-plugins  sigs.k8s.io/scheduler-plugins (cmd/scheduler) -> bin/scheduler-plugins
#   jobset             sigs.k8s.io/jobset (its root package)        -> bin/jobset-controller
#   trainer            github.com/kubeflow/trainer/v2 (cmd/trainer-controller-manager)
#                                                                    -> bin/trainer-controller-manager
#
# and each tool's CRDs (from the same module) into crds/<tool>-<version>/. Each is built in a
# small wrapper module, as the Kubernetes binaries are: KubeRay and the training operator need
# nothing more; scheduler-plugins' go.mod pins every k8s.io staging module with replace
# directives, which only the main module's count, so the wrapper copies them, and two of the
# pinned modules are refused by the Go module proxy (403): k8s.io/sample-apiserver v0.31.8
# (required, never imported: an empty local stub stands in) and k8s.io/cloud-provider v0.31.8
# (imported: v0.31.14 of the same line instead). JobSet and Kubeflow Trainer v2 need nothing
# more either; the proxy refuses JobSet's version list (403) but serves its exact versions, and
# every version here is exact, so nothing asks for a list.
#
# A tool is up to date when its binary and bin/<binary>.version ("<module>@<version>") are
# there and its CRDs are; a second run is then a no-op. Several tools are built one after the
# other (never at once: Go builds are CPU-bound), each timed ("built in N s").
#
# Usage: build-operators.sh [--download-only] [kuberay|training-operator|scheduler-plugins|jobset|
# trainer ...] (default: all five). `--download-only` resolves each pending tool's module graph into
# GOMODCACHE (`go mod tidy` in a scratch wrapper) and compiles nothing, without the build lock:
# a cold CI run can fetch while the CPU-bound Kubernetes build runs (the module cache has its
# own locking), so that the build steps later only compile.
# Environment: WLMAP_CACHE (cache root), WLMAP_KUBERAY_VERSION, WLMAP_TRAINING_OPERATOR_VERSION,
# WLMAP_SCHEDULER_PLUGINS_VERSION, WLMAP_JOBSET_VERSION, WLMAP_TRAINER_VERSION (defaults below),
# WLMAP_BUILD_JOBS (default 1 on shared development machines, all cores when CI=true).
set -euo pipefail

KUBERAY_VERSION="${WLMAP_KUBERAY_VERSION:-v1.5.0}"
TRAINING_OPERATOR_VERSION="${WLMAP_TRAINING_OPERATOR_VERSION:-v1.8.1}"
SCHEDULER_PLUGINS_VERSION="${WLMAP_SCHEDULER_PLUGINS_VERSION:-v0.31.8}"
JOBSET_VERSION="${WLMAP_JOBSET_VERSION:-v0.8.2}"
# Trainer v2.0.0's go.mod requires sigs.k8s.io/jobset v0.8.2: the two move together.
TRAINER_VERSION="${WLMAP_TRAINER_VERSION:-v2.0.0}"
# scheduler-plugins v0.31.8 pins k8s.io/cloud-provider v0.31.8, which the proxy refuses.
CLOUD_PROVIDER_VERSION="${WLMAP_CLOUD_PROVIDER_VERSION:-v0.31.14}"
CACHE="${WLMAP_CACHE:-$HOME/.cache/workload-map}"
BIN="$CACHE/bin"
if [[ "${CI:-}" == true ]]; then JOBS="${WLMAP_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"
else JOBS="${WLMAP_BUILD_JOBS:-1}"; fi

die() { echo "build-operators: $*" >&2; exit 1; }
log() { echo "build-operators: $*" >&2; }

for v in "$KUBERAY_VERSION" "$TRAINING_OPERATOR_VERSION" "$SCHEDULER_PLUGINS_VERSION" "$CLOUD_PROVIDER_VERSION" \
    "$JOBSET_VERSION" "$TRAINER_VERSION"; do
    [[ "$v" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "a version must look like v1.5.0, got '$v'"
done

DOWNLOAD_ONLY=false
if [[ "${1:-}" == --download-only ]]; then DOWNLOAD_ONLY=true; shift; fi
TOOLS=("$@")
[[ ${#TOOLS[@]} -gt 0 ]] || TOOLS=(kuberay training-operator scheduler-plugins jobset trainer)

# tool -> binary, module, package built, version, CRD folder inside the module
spec() {
    case "$1" in
        kuberay) echo "kuberay-operator github.com/ray-project/kuberay/ray-operator github.com/ray-project/kuberay/ray-operator $KUBERAY_VERSION config/crd/bases" ;;
        training-operator) echo "training-operator github.com/kubeflow/training-operator github.com/kubeflow/training-operator/cmd/training-operator.v1 $TRAINING_OPERATOR_VERSION manifests/base/crds" ;;
        scheduler-plugins) echo "scheduler-plugins sigs.k8s.io/scheduler-plugins sigs.k8s.io/scheduler-plugins/cmd/scheduler $SCHEDULER_PLUGINS_VERSION manifests/coscheduling" ;;
        jobset) echo "jobset-controller sigs.k8s.io/jobset sigs.k8s.io/jobset $JOBSET_VERSION config/components/crd/bases" ;;
        trainer) echo "trainer-controller-manager github.com/kubeflow/trainer/v2 github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager $TRAINER_VERSION manifests/base/crds" ;;
        *) return 1 ;;
    esac
}
for tool in "${TOOLS[@]}"; do
    spec "$tool" >/dev/null || die "unknown tool '$tool' (kuberay, training-operator, scheduler-plugins, jobset, trainer)"
done

tool_ok() {
    local binary="$1" module="$2" version="$3" crds="$4"
    [[ -x "$BIN/$binary" && -f "$BIN/$binary.version" ]] &&
        [[ "$(head -n1 "$BIN/$binary.version")" == "$module@$version" ]] &&
        compgen -G "$crds/*.yaml" >/dev/null
}

pending=()
for tool in "${TOOLS[@]}"; do
    read -r binary module _ version _ <<<"$(spec "$tool")"
    if tool_ok "$binary" "$module" "$version" "$CACHE/crds/$tool-$version"; then
        log "$binary $version already in $BIN"
    else
        pending+=("$tool")
    fi
done
[[ ${#pending[@]} -gt 0 ]] || exit 0

command -v go >/dev/null 2>&1 || die "the Go toolchain is missing (needed once to build ${pending[*]} for
the gang end-to-end tests). Install Go >= 1.24 from https://go.dev/dl or your package manager, then
run 'make operators' again."

mkdir -p "$BIN" "$CACHE/src" "$CACHE/crds"
cd "$CACHE/src"  # outside any Go module of the caller

# The module's directory in the module cache (downloaded if needed).
module_dir() {
    local dir
    dir="$(GOFLAGS=-mod=mod go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
    [[ -d "$dir" ]] || die "could not download $1@$2 (is the Go module proxy reachable?)"
    echo "$dir"
}

# scheduler-plugins: the module's replace block, with the two refused versions swapped.
wrap_scheduler_plugins() {
    local src="$1" dir="$2" args=() line from to
    mkdir -p "$dir/stub-sample-apiserver"
    printf 'module k8s.io/sample-apiserver\n\ngo 1.22\n' >"$dir/stub-sample-apiserver/go.mod"
    while read -r from to; do
        case "$from" in
            k8s.io/sample-apiserver) to="./stub-sample-apiserver" ;;
            k8s.io/cloud-provider) to="k8s.io/cloud-provider@$CLOUD_PROVIDER_VERSION" ;;
        esac
        args+=("-replace=$from=$to")
    done < <(sed -n '/^replace[[:space:]]*(/,/^)/p' "$src/go.mod" |
        sed -n 's#^[[:space:]]*\([^[:space:]]\{1,\}\)[[:space:]]*=>[[:space:]]*\([^[:space:]]\{1,\}\)[[:space:]]\{1,\}\(v[^[:space:]]*\).*#\1 \2@\3#p')
    [[ ${#args[@]} -gt 0 ]] || die "no replace directives found in $src/go.mod"
    go mod edit "${args[@]}"
}

# The tool's wrapper module in $2, tidied (which downloads its module graph); with $3 = true
# the scratch directory is removed afterwards (--download-only).
wrap() {
    local tool="$1" dir="$2" scratch="${3:-false}" binary module pkg version crddir src
    read -r binary module pkg version crddir <<<"$(spec "$tool")"
    src="$(module_dir "$module" "$version")"
    rm -rf "$dir" && mkdir -p "$dir"
    (
        cd "$dir"
        go mod init "${tool//-/}build.local" >/dev/null 2>&1
        go mod edit "-require=$module@$version" "-tool=$pkg"
        if [[ "$tool" == scheduler-plugins ]]; then wrap_scheduler_plugins "$src" "$dir"; fi
        log "$tool: go mod tidy (downloads the module graph; first time only)"
        nice -n 10 go mod tidy
    )
    if [[ "$scratch" == true ]]; then rm -rf "$dir"; fi
}

build_tool() {
    local tool="$1" binary module pkg version crddir src dir start=$SECONDS
    read -r binary module pkg version crddir <<<"$(spec "$tool")"
    src="$(module_dir "$module" "$version")"
    dir="$CACHE/src/$tool-$version"
    wrap "$tool" "$dir"
    (
        cd "$dir"
        log "$tool: building $pkg@$version with -p $JOBS"
        "${GO[@]}" build -p "$JOBS" -trimpath -ldflags "-s -w" -o "$BIN/.$binary.tmp" "$pkg"
    )
    mv -f "$BIN/.$binary.tmp" "$BIN/$binary"
    rm -rf "$CACHE/crds/$tool-$version" && mkdir -p "$CACHE/crds/$tool-$version"
    local f
    for f in "$src/$crddir"/*.yaml; do
        [[ "$(basename "$f")" == kustomization.yaml || "$(basename "$f")" == scheduler-config.yaml ]] && continue
        cp "$f" "$CACHE/crds/$tool-$version/"
    done
    chmod -R u+w "$CACHE/crds/$tool-$version"
    echo "$module@$version" >"$BIN/$binary.version"
    log "$tool: $binary $version built in $((SECONDS - start)) s; CRDs in $CACHE/crds/$tool-$version"
}

if [[ "$DOWNLOAD_ONLY" == true ]]; then
    export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="-buildvcs=false" GOMAXPROCS="$JOBS"
    for tool in "${pending[@]}"; do
        start=$SECONDS
        wrap "$tool" "$(mktemp -d "$CACHE/src/.$tool-download.XXXXXX")" true
        log "$tool: modules downloaded in $((SECONDS - start)) s"
    done
    exit 0
fi
# One build at a time per cache dir, and never beside another build of this script.
exec 9>"$CACHE/.build-operators.lock"
flock 9

export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" CGO_ENABLED=0 GOFLAGS="-buildvcs=false" GOMAXPROCS="$JOBS"
GO=(nice -n 10 go)

for tool in "${pending[@]}"; do
    read -r binary module _ version _ <<<"$(spec "$tool")"
    # built by another run while this one waited for the lock
    tool_ok "$binary" "$module" "$version" "$CACHE/crds/$tool-$version" && continue
    build_tool "$tool"
done
