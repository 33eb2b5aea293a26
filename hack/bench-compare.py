"""Median-of-N before/after comparison of `benchmarks/run.py` outputs (hack/bench-ab.sh).

Each module's table is sliced by its header's column starts; a row's key is its module, its
text cells before the first number, and its occurrence; every numeric cell (the first number
of "a / b" cells) is a figure. Only our own figures are judged: columns naming an alternative
(kubectl, gojq, libjq, jaq, reference, kube-state-metrics, generate_latest, flat), targets,
ratios, counts and loads are shown as context but never flagged.
"""
import re, statistics, sys
from collections import defaultdict
from pathlib import Path

NUM = re.compile(r"^-?\d+(\.\d+)?")
SKIP = re.compile(r"kubectl|gojq|libjq|jaq|reference|generate_latest|flat|target|ratio|/ours|x_|"
                  r"\bn\b|workloads|pods|series|load|ok|verdict|note|patched|preempted|reconciles|"
                  r"gc_collections|vs|evaluation|warm page / data", re.I)

def tables(path):
    mod, header, starts, names = None, None, [], []
    seen: dict = defaultdict(int)
    out = {}
    for line in Path(path).read_text().splitlines():
        if line.startswith("== "):
            mod, header = line[3:].strip(), None
            continue
        if mod is None or not line.startswith("  ") or line.startswith("  ("):
            continue
        if header is None:
            header = line
            starts = [m.start() for m in re.finditer(r"(?<=  )\S|^  \S", line)]
            names = [line[s:e].strip() for s, e in zip(starts, starts[1:] + [None])]
            continue
        cells = [line[s:e].strip() if s < len(line) else "" for s, e in zip(starts, starts[1:] + [None])]
        key_parts = []
        for name, cell in zip(names, cells):
            if NUM.match(cell) or cell == "-":
                break
            key_parts.append(cell)
        base = (mod, " | ".join(key_parts)[:90])
        seen[base] += 1
        key = base + (seen[base],)
        for name, cell in zip(names, cells):
            m = NUM.match(cell)
            if m and name not in ("",) and not (name in key_parts):
                out[key + (name,)] = float(m.group(0))
    return out

runs = {t: [tables(p) for p in sorted(Path(sys.argv[1]).glob(f"{t}-[0-9].txt"))] for t in ("before", "after")}
print(f"runs: before {len(runs['before'])}, after {len(runs['after'])}")
keys = sorted(set().union(*runs["before"]) & set().union(*runs["after"]))
flag = 0
print(f"{'module':15} {'row':60} {'figure':28} {'before':>9} {'after':>9} {'change':>8}")
for k in keys:
    b = [r[k] for r in runs["before"] if k in r]
    a = [r[k] for r in runs["after"] if k in r]
    if not b or not a:
        continue
    mb, ma = statistics.median(b), statistics.median(a)
    judged = not SKIP.search(k[3])
    ch = (ma - mb) / mb * 100 if mb else 0.0
    mark = ""
    # rates (x/s) are better when higher
    if "/s" in k[3]:
        ch = -ch
    if judged and ch > 5 and "rss" not in k[3].lower():
        mark = "  SLOWER"; flag += 1
    if not judged:
        mark = "  (context)"
    print(f"{k[0]:15} {k[1][:60]:60} {k[3][:28]:28} {mb:9.3f} {ma:9.3f} {ch:+7.1f}%{mark}")
print(f"rows slower by more than 5%: {flag}")
