#!/usr/bin/env bash
# Builds the real kube-apiserver, kube-controller-manager, kube-scheduler and etcd from their Go
# modules for the integration tests.
#
# No Docker here, and no release tarballs: `k8s.io/kubernetes` cannot be `go install`ed (its go.mod
# replaces every k8s.io/* staging module with a ./staging path), so a tiny wrapper module requires
# it and pins each staging module to the matching v0.MINOR.PATCH tag. etcd gets its own wrapper
# (one module would unify grpc/otel versions across both) at the version the release's go.mod uses.
# Binaries land in ${WLMAP_CACHE:-$HOME/.cache/workload-map}/bin, outside the checkout, so every
# clone on the machine (CI included) reuses them; a second run with both present is a no-op.
#
# Environment: WLMAP_CACHE (cache root), WLMAP_KUBE_VERSION (default v1.37.2), WLMAP_EXTRA_TOOLS,
# WLMAP_ETCD_VERSION (default: the etcd server version required by that release),
# WLMAP_BUILD_JOBS (default 1, as development machines here are shared; all cores when CI=true).
set -euo pipefail

KUBE_VERSION="${WLMAP_KUBE_VERSION:-v1.37.2}"
KUBE_TOOLS=(kube-apiserver kube-controller-manager kube-scheduler)
# Optional more cmd/ tools of the same release in the same build, e.g. WLMAP_EXTRA_TOOLS=kubectl
# (benchmarks and the kubectl comparison tests use it; the integration tests do not need it).
for extra in ${WLMAP_EXTRA_TOOLS:-}; do
    case "$extra" in
        kubectl|kube-proxy|kubeadm) KUBE_TOOLS+=("$extra") ;;
        *) echo "build-apiserver: WLMAP_EXTRA_TOOLS: unknown tool '$extra' (kubectl, kube-proxy, kubeadm)" >&2; exit 1 ;;
    esac
done
CACHE="${WLMAP_CACHE:-$HOME/.cache/workload-map}"
BIN="$CACHE/bin"
if [[ "${CI:-}" == true ]]; then JOBS="${WLMAP_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"
else JOBS="${WLMAP_BUILD_JOBS:-1}"; fi

die() { echo "build-apiserver: $*" >&2; exit 1; }
log() { echo "build-apiserver: $*" >&2; }

[[ "$KUBE_VERSION" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] ||
    die "WLMAP_KUBE_VERSION must look like v1.34.4, got '$KUBE_VERSION'"
KUBE_MINOR="${BASH_REMATCH[1]}"
STAGING_VERSION="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"

# kube-apiserver --version prints "Kubernetes v1.34.4"; etcd --version starts "etcd Version: 3.6.4".
# kubectl has no --version flag: `kubectl version --client` starts "Client Version: v1.34.4".
tool_version() {
    if [[ "$1" == kubectl ]]; then
        "$BIN/kubectl" version --client 2>/dev/null | sed -n 's/^Client Version: /Kubernetes /p'
    else
        "$BIN/$1" --version 2>/dev/null
    fi
}
kube_ok() {
    local tool
    for tool in "${KUBE_TOOLS[@]}"; do
        [[ -x "$BIN/$tool" ]] && [[ "$(tool_version "$tool")" == "Kubernetes $KUBE_VERSION" ]] || return 1
    done
}
etcd_ok() { [[ -x "$BIN/etcd" ]] && [[ -f "$BIN/etcd.version" ]] &&
    [[ "$(head -n1 "$BIN/etcd.version")" == "$1" ]] &&
    [[ $'\n'"$("$BIN/etcd" --version 2>/dev/null)"$'\n' == *$'\n'"etcd Version: ${1#v}"$'\n'* ]]; }

# Fast path: nothing to do (no Go needed) when both binaries answer with the expected versions.
if kube_ok && [[ -f "$BIN/etcd.version" ]] && etcd_ok "$(head -n1 "$BIN/etcd.version")" &&
    [[ -z "${WLMAP_ETCD_VERSION:-}" || "$(head -n1 "$BIN/etcd.version")" == "$WLMAP_ETCD_VERSION" ]]; then
    log "${KUBE_TOOLS[*]} $KUBE_VERSION and etcd $(head -n1 "$BIN/etcd.version") already in $BIN"
    exit 0
fi

command -v go >/dev/null 2>&1 || die "the Go toolchain is missing (needed once to build kube-apiserver
and etcd for the integration tests). Install Go >= 1.24 from https://go.dev/dl or your package
manager (e.g. 'apt-get install golang-go', 'brew install go'), then run 'make apiserver' again.
Alternatively point WLMAP_TEST_KUBECONFIG at an existing cluster's kubeconfig."

mkdir -p "$BIN" "$CACHE/src"
cd "$CACHE/src"  # outside any Go module of the caller
# One build at a time per cache dir (two `make test` runs at once would race on the same files).
exec 9>"$CACHE/.build-apiserver.lock"
flock 9

export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" CGO_ENABLED=0 GOFLAGS="-buildvcs=false"
# Keep the go command and the compilers it spawns to $JOBS threads, at low priority.
export GOMAXPROCS="$JOBS"
GO=(nice -n 10 go)

BUILD_DATE="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

resolve_kube() {
    local etcd_version
    log "resolving k8s.io/kubernetes@$KUBE_VERSION"
    gomod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
        sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
    [[ -f "$gomod" ]] || die "could not download k8s.io/kubernetes@$KUBE_VERSION (is the Go module proxy reachable?)"
    # The staging list comes from the release itself: every `k8s.io/<name> => ./staging/...` line.
    staging="$(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\1#p' "$gomod" | sort -u)"
    [[ -n "$staging" ]] || die "no staging replace directives found in $gomod"
    etcd_version="$(sed -n 's#^[[:space:]]*go\.etcd\.io/etcd/server/v3[[:space:]]\{1,\}\(v[0-9.]*\).*#\1#p' "$gomod" | head -n1)"
    echo "$etcd_version" >"$CACHE/src/etcd-pairing-$KUBE_VERSION"
}

build_kube() {
    local dir="$CACHE/src/kube-apiserver-$KUBE_VERSION"
    if ! kube_ok; then
        rm -rf "$dir" && mkdir -p "$dir"
        (
            cd "$dir"
            go mod init kasbuild.local >/dev/null 2>&1
            local args=() godebug
            for name in $staging; do args+=("-replace=$name=$name@$STAGING_VERSION"); done
            local tools=() tool
            for tool in "${KUBE_TOOLS[@]}"; do tools+=("-tool=k8s.io/kubernetes/cmd/$tool"); done
            go mod edit "${args[@]}" "-require=k8s.io/kubernetes@$KUBE_VERSION" "${tools[@]}"
            # GODEBUG defaults follow the main module, so copy the release's godebug line.
            godebug="$(sed -n 's/^godebug[[:space:]]\{1,\}//p' "$gomod" | head -n1)"
            [[ -n "$godebug" ]] && go mod edit "-godebug=$godebug"
            log "go mod tidy (downloads the module graph; first time only)"
            "${GO[@]}" mod tidy
            local pkg=k8s.io/component-base/version cpkg=k8s.io/client-go/pkg/version ld="-s -w"
            for p in "$pkg" "$cpkg"; do
                ld+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$KUBE_MINOR"
                ld+=" -X $p.gitTreeState=clean -X $p.gitCommit= -X $p.buildDate=$BUILD_DATE"
            done
            log "building ${KUBE_TOOLS[*]} $KUBE_VERSION in one go build with -p $JOBS (takes many minutes)"
            # One build of all three shares the compiled packages; -o DIR/ writes one binary each.
            rm -rf "$BIN/.kube.tmp" && mkdir -p "$BIN/.kube.tmp"
            local pkgs=()
            for tool in "${KUBE_TOOLS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$tool"); done
            "${GO[@]}" build -p "$JOBS" -trimpath -tags selinux,notest -ldflags "$ld" \
                -o "$BIN/.kube.tmp/" "${pkgs[@]}"
        )
        local tool
        for tool in "${KUBE_TOOLS[@]}"; do mv -f "$BIN/.kube.tmp/$tool" "$BIN/$tool"; done
        rmdir "$BIN/.kube.tmp"
        kube_ok || die "built binaries do not all report 'Kubernetes $KUBE_VERSION': $("$BIN/kube-apiserver" --version 2>&1 | head -n1)"
    fi
    log "${KUBE_TOOLS[*]}: $("$BIN/kube-apiserver" --version)"
}

build_etcd() {
    local version="$1" dir
    dir="$CACHE/src/etcd-$version"
    if ! etcd_ok "$version"; then
        rm -rf "$dir" && mkdir -p "$dir"
        (
            cd "$dir"
            go mod init etcdbuild.local >/dev/null 2>&1
            go mod edit "-require=go.etcd.io/etcd/server/v3@$version" "-tool=go.etcd.io/etcd/server/v3"
            "${GO[@]}" mod tidy
            log "building etcd $version"
            # Unstamped etcd prints "Git SHA: Not provided"; modules carry no commit, say where it came from.
            "${GO[@]}" build -p "$JOBS" -trimpath \
                -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$version" \
                -o "$BIN/.etcd.tmp" go.etcd.io/etcd/server/v3
        )
        mv -f "$BIN/.etcd.tmp" "$BIN/etcd"
        echo "$version" >"$BIN/etcd.version"
        etcd_ok "$version" || die "built etcd does not report version ${version#v}"
    fi
    log "etcd: $("$BIN/etcd" --version | head -n1)"
}

start=$SECONDS
gomod="" staging=""
resolve_kube
ETCD_VERSION="${WLMAP_ETCD_VERSION:-$(cat "$CACHE/src/etcd-pairing-$KUBE_VERSION")}"
[[ "$ETCD_VERSION" =~ ^v3\.[0-9]+\.[0-9]+$ ]] ||
    die "cannot tell which etcd goes with $KUBE_VERSION; set WLMAP_ETCD_VERSION (e.g. v3.6.4)"
build_etcd "$ETCD_VERSION"  # the small one first
build_kube
log "done in $((SECONDS - start)) s; binaries in $BIN"
