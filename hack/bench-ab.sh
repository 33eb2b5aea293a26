#!/usr/bin/env bash
# Before/after comparison of `make bench` (issue 20 item 9): every benchmark module runs in tree A
# and tree B back to back, in ABBA order across ROUNDS rounds (a drift in the machine's speed falls
# on both sides), each tree with its own venv (`python -m venv DIR/.venv && DIR/.venv/bin/pip
# install -e 'DIR[dev,bench]'`: entry points differ between trees). Then hack/bench-compare.py
# prints the medians side by side.
#   usage: hack/bench-ab.sh TREE_A TREE_B OUT_DIR [ROUNDS]
# On a shared machine, run it on a core of its own (`taskset -c 0 hack/bench-ab.sh …` with every
# other process moved off that core) and say so with the figures.
set -euo pipefail
a="$(realpath "$1")" b="$(realpath "$2")" out="$3" rounds="${4:-5}"
mkdir -p "$out"
# both trees byte-compiled, as installed users run them (an older tree's run.py does not do it)
for t in "$a" "$b"; do "$t/.venv/bin/python" -m compileall -q "$t/src/workload_map" >/dev/null; done
mods=$(cd "$a/benchmarks" && "$a/.venv/bin/python" -c 'import run; print(" ".join(run.MODULES))')
one() { # tree-dir label round module
    (cd "$1" && env -u PYTHONPATH "$1/.venv/bin/python" benchmarks/run.py "$4") >>"$out/$2-$3.txt" 2>&1 || true
    echo "$2 $3 $4 load=$(cut -d' ' -f1-3 /proc/loadavg) $(date +%T)" >>"$out/progress.txt"
}
for ((i = 1; i <= rounds; i++)); do
    for m in $mods; do
        if ((i % 2)); then one "$a" before "$i" "$m"; one "$b" after "$i" "$m"
        else one "$b" after "$i" "$m"; one "$a" before "$i" "$m"; fi
    done
done
python3 "$(dirname "$0")/bench-compare.py" "$out"
