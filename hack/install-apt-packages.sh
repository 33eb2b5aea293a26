#!/usr/bin/env bash
# Installs the Debian packages named as arguments when some are missing (CI runs as root on a
# Debian image). python3-venv: tests/integration/test_image.py builds a clean venv from the
# system interpreter (one uid 65532 can execute); util-linux/mount: unshare, setpriv, mount.
set -euo pipefail
missing=()
for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]} == 0)); then
    echo "install-apt-packages: $* already installed" >&2
    exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
    echo "install-apt-packages: missing ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
