#!/usr/bin/env bash
# Installs Debian's chromium (and the DejaVu fonts the web view's screenshots are taken with) for
# the browser tests, which Playwright drives with executable_path=/usr/bin/chromium (its own
# browser download cannot work here). As root it uses apt (--no-install-recommends); otherwise
# it says what to run. A no-op when chromium is present.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi "DejaVu Sans"; then
    echo "install-chromium: $(chromium --version 2>/dev/null | head -n1)" >&2
    exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
    echo "install-chromium: Chromium is missing; the web view's browser tests need it." >&2
    echo "  Run as root: apt-get install --no-install-recommends chromium fonts-dejavu-core" >&2
    echo "  (or point WLMAP_CHROMIUM at a Chromium binary)." >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core fontconfig >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "install-chromium: apt installed chromium but it is not on PATH" >&2; exit 1; }
echo "install-chromium: $(chromium --version 2>/dev/null | head -n1)" >&2
