#!/usr/bin/env bash
# `make dist`: the sdist and the wheel (built from the sdist, so the sdist is proven complete)
# in dist/, `twine check --strict`, then the wheel installed into a clean virtual environment of
# a system interpreter (nothing from the development venv) and its entry points run.
# Arguments: [OUT_DIR [VENV_DIR]]; tests/integration/test_image.py uses the same script and then
# runs the venv as uid 65532 on a read-only root. WLMAP_DIST_PYTHON picks the venv's interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
out="${1:-dist}"
venv="${2:-}"
interpreter="${WLMAP_DIST_PYTHON:-$(command -v python3.11 || command -v python3)}"
# a PYTHONPATH naming a source tree with its egg-info makes pip skip the install
unset PYTHONPATH PYTHONHOME
mkdir -p "$out"
rm -f "$out"/workload_map-*.whl "$out"/workload_map-*.tar.gz
"$PY" -m build --outdir "$out" . >"$out/build.log" 2>&1 || { tail -40 "$out/build.log" >&2; exit 1; }
"$PY" -m twine check --strict "$out"/workload_map-*.whl "$out"/workload_map-*.tar.gz
cleanup=""
if [[ -z "$venv" ]]; then
    venv="$(mktemp -d)/venv"
    cleanup="$(dirname "$venv")"
    trap 'rm -rf "$cleanup"' EXIT
fi
"$interpreter" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$out"/workload_map-*.whl
echo "dist: $(cd "$out" && ls workload_map-*.whl workload_map-*.tar.gz | tr '\n' ' ')"
echo "dist: installed into a clean venv ($("$venv/bin/python" --version)): wlmap $("$venv/bin/wlmap" --version), workload-map-operator $("$venv/bin/workload-map-operator" --version), $("$venv/bin/wlmap" definitions | tail -n +2 | wc -l) catalog definitions"
