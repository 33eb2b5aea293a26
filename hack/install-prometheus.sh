#!/usr/bin/env bash
# Installs Debian's prometheus package (a real Prometheus server and promtool) for the exporter's
# integration tests. As root it uses apt (--no-install-recommends); otherwise it says what to run.
# A no-op when both binaries are present.
set -euo pipefail

have() { command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; }
if have; then
    echo "install-prometheus: $(prometheus --version 2>&1 | head -n1)" >&2
    exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
    echo "install-prometheus: Prometheus is missing; the exporter's Prometheus tests need it." >&2
    echo "  Run as root: apt-get install --no-install-recommends prometheus" >&2
    echo "  (or put prometheus and promtool on PATH); those tests skip until then." >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# Debian's package starts a service on install where an init system runs; there is none here,
# and the tests start their own server on loopback, so service start-up is refused.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq || apt-get update -qq
apt-get install -y -qq --no-install-recommends prometheus >/dev/null
have || { echo "install-prometheus: apt installed prometheus but the binaries are not on PATH" >&2; exit 1; }
echo "install-prometheus: $(prometheus --version 2>&1 | head -n1)" >&2
