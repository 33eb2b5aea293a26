"""Deep programs and deep inputs under Python's default recursion limit, in a fresh interpreter.

The engine must not raise the process-wide recursion limit (a library must not change global
state at import, and deep C recursion under a raised limit can crash the process), so these run
in a subprocess: a segfault shows up as a signal exit, not as a lost test run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import pytest

DEPTH = 10000

SCRIPT = textwrap.dedent(
    """
    import json, sys
    before = sys.getrecursionlimit()
    from workload_map import jq
    from workload_map.jq import decode, encode

    DEPTH = int(sys.argv[1])
    text = "[" * DEPTH + "1" + "]" * DEPTH
    value = decode.loads(text)
    report = {"limit_before": before, "limit_after": sys.getrecursionlimit(), "results": {}}

    def run(name, program, **kw):
        try:
            out = jq.compile(program, variables=["v"]).all(
                value, variables={"v": value}, limits=jq.Limits(1000, 60, 1000)
            )
            report["results"][name] = ["ok", [encode.dumps(x, None) for x in out]]
        except jq.JqLimitError as e:
            report["results"][name] = ["limit", str(e)]
        except jq.JqError as e:
            report["results"][name] = ["error", type(e).__name__ + ": " + str(e)]

    run("identity", ".")
    run("tojson", "tojson")
    run("walk", "walk(.)")
    run("walk_update", "walk(if type == \\"number\\" then . + 1 else . end) | flatten")
    run("paths", "[paths] | length")
    run("recurse_all", "[..] | length")
    run("equals", ". == $v")
    run("tostream", "[tostream] | length")
    run("fromstream", "fromstream(tostream) | tojson | length")
    run("getpath", "last(paths) as $p | getpath($p)")
    run("contains", "contains($v)")
    run("runaway", "def f: 1 + f; f")
    report["limit_end"] = sys.getrecursionlimit()
    for name, program in {
        "brackets": "[" * DEPTH + "]" * DEPTH,
        "parens": "(" * DEPTH + "1" + ")" * DEPTH,
        "objects": "{a:" * DEPTH + "1" + "}" * DEPTH,
        "negations": "-" * DEPTH + "1",
    }.items():
        try:
            jq.compile(program)
            report["results"][name] = ["ok", []]
        except jq.JqParseError as e:
            report["results"][name] = ["parse", str(e)]
    print(json.dumps(report))
    """
)


@pytest.fixture(scope="module")
def report() -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(DEPTH)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def results(report: dict[str, object]) -> dict[str, list[object]]:
    out = report["results"]
    assert isinstance(out, dict)
    return out


def test_the_engine_leaves_the_recursion_limit_alone(report: dict[str, object]) -> None:
    assert report["limit_after"] == report["limit_before"]
    # evaluations re-run on a deep stack restore the limit afterwards
    assert report["limit_end"] == report["limit_before"]


def test_deep_recursion_reruns_on_a_deep_stack(report: dict[str, object]) -> None:
    got = results(report)
    assert got["contains"] == ["ok", ["true"]]
    assert got["runaway"] == ["limit", "maximum depth of 1000 nested calls exceeded"]


def test_deep_input_results_are_exact(report: dict[str, object]) -> None:
    got = results(report)
    deep_text = "[" * DEPTH + "1" + "]" * DEPTH
    assert got["identity"] == ["ok", [deep_text]]
    assert got["tojson"] == ["ok", [json.dumps(deep_text)]]
    # gojq returns the value; the walk runs on an explicit stack (QA #12)
    assert got["walk"] == ["ok", [deep_text]]
    assert got["walk_update"] == ["ok", ["[2]"]]
    assert got["paths"] == ["ok", [str(DEPTH)]]
    assert got["recurse_all"] == ["ok", [str(DEPTH + 1)]]
    assert got["tostream"] == ["ok", [str(DEPTH + 1)]]
    assert got["getpath"] == ["ok", ["1"]]


@pytest.mark.parametrize("name", ["equals", "fromstream"])
def test_deep_input_is_a_result_or_a_limit_error(report: dict[str, object], name: str) -> None:
    status, detail = results(report)[name]
    expected = {"equals": ["true"], "fromstream": [str(2 * DEPTH + 1)]}[name]
    assert status == "limit" or (status, detail) == ("ok", expected), detail


@pytest.mark.parametrize("name", ["brackets", "parens", "objects", "negations"])
def test_deep_programs_are_parse_errors(report: dict[str, object], name: str) -> None:
    status, detail = results(report)[name]
    assert status == "parse"
    assert "too deep" in str(detail)


# One thread holds a deep-stack evaluation open while the main thread recurses on its own
# 8 MB stack. Before issue 26's fix the deep run raised the process-wide recursion limit to
# 60 000, so the main thread's `path(f)` 20 000 levels deep ran past its C stack: a segfault
# (exit -11), seen as a dead xdist worker in a loaded shuffled run.
CONCURRENT_SCRIPT = textwrap.dedent(
    """
    import json, sys, threading
    from workload_map import jq
    from workload_map.jq.deep import run_deep

    value = 1
    for _ in range(20_000):
        value = [value]
    before = sys.getrecursionlimit()
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def held():
        inside.set()
        release.wait()
        # the deep thread's own limit is raised: it recurses far past the process-wide one
        def down(n):
            return 0 if n == 0 else 1 + down(n - 1)
        return down(20 * before)

    def hold():
        seen["deep"] = run_deep(held)

    holder = threading.Thread(target=hold)
    holder.start()
    inside.wait()
    report = {"limit_during": sys.getrecursionlimit(), "limit_before": before}

    def down(n):
        return 0 if n == 0 else 1 + down(n - 1)

    try:
        down(20 * before)
        report["main_plain"] = "no error"
    except RecursionError:
        report["main_plain"] = "RecursionError"
    program = 'def f: if type == "array" then (.[0] | f) // null else . end; path(f) | length'
    try:
        out = jq.compile(program).all(value, limits=jq.Limits(1000, 600, 100_000))
        report["main_jq"] = ["ok", out]
    except jq.JqError as e:
        report["main_jq"] = ["error", type(e).__name__, str(e)]
    release.set()
    holder.join()
    report["deep"] = seen.get("deep")
    report["limit_after"] = sys.getrecursionlimit()
    print(json.dumps(report))
    """
)


def test_a_deep_run_on_one_thread_leaves_every_other_threads_limit_alone() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CONCURRENT_SCRIPT],
        capture_output=True,
        text=True,
        timeout=600,
    )
    # a crash is an exit by signal (-11), not a lost test run
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    report = json.loads(proc.stdout)
    before = report["limit_before"]
    assert report["limit_during"] == report["limit_after"] == before
    # the main thread keeps its own limit while the other thread is on its deep stack
    assert report["main_plain"] == "RecursionError"
    # too deep for the deep stack too: a clean limit error, the evaluation's only outcome
    assert report["main_jq"] == [
        "error",
        "JqLimitError",
        "maximum depth exceeded (recursion too deep)",
    ]
    assert report["deep"] == 20 * before


def test_deep_runs_on_several_threads_at_once() -> None:
    # the deep stacks no longer share a process-wide setting: they need not take turns
    from workload_map.jq.deep import run_deep

    inside = threading.Barrier(3, timeout=60)

    def deep() -> int:
        inside.wait()  # all three deep threads are running at once

        def down(n: int) -> int:
            return 0 if n == 0 else 1 + down(n - 1)

        return down(10 * sys.getrecursionlimit())

    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(run_deep(deep))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert results == [10 * sys.getrecursionlimit()] * 3


# An application's (or a test runner's) recursion limit far above Python's default: on CPython
# 3.11 each generator the engine resumes takes C stack, so a jq recursion allowed to reach that
# limit on an ordinary 8 MB stack segfaulted before it did (issue 26: `path(f)` below dies near
# 21 000 counts, 7 000 levels; before the fix each case here ended the process, exit -11). Past
# deep.SAFE_RECURSION_LIMIT the first attempt stops early and the evaluation moves to the deep
# stack, whatever the limit; the limit itself is left as the application set it.
HIGH_LIMIT_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from workload_map import jq

    limit, depth, api = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    sys.setrecursionlimit(limit)
    value = 1
    for _ in range(depth):
        value = [value]
    walk = 'def f: if type == "array" then (.[0] | f) // null else . end; '
    limits = jq.Limits(1000, 600, 100_000)
    try:
        if api == "all":
            out = jq.compile(walk + "path(f) | length").all(value, limits=limits)
        elif api == "first":
            out = jq.compile(walk + "path(f) | length").first(value, limits=limits)
        elif api == "iter":
            out = list(jq.compile(walk + "path(f) | length, 7").iter(value, limits=limits))
        else:
            out = [len(p) for p in jq.compile(walk + "f").paths(value, limits=limits)]
        report = ["ok", out]
    except jq.JqError as e:
        report = ["error", type(e).__name__, str(e)]
    print(json.dumps({"report": report, "limit_after": sys.getrecursionlimit()}))
    """
)
HIGH_DEPTH = 10_000  # 30 000 frames: past what an 8 MB stack holds, within the deep stack


@pytest.mark.parametrize(
    ("limit", "api"),
    [(100_000, "all"), (100_000, "first"), (100_000, "iter"), (100_000, "paths"), (10**7, "all")],
)
def test_a_deep_recursion_under_a_high_recursion_limit_moves_to_the_deep_stack(
    limit: int, api: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", HIGH_LIMIT_SCRIPT, str(limit), str(HIGH_DEPTH), api],
        capture_output=True,
        text=True,
        timeout=600,
    )
    # a crash is an exit by signal (-11), not a lost test run
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    out = json.loads(proc.stdout)
    assert out["limit_after"] == limit
    expected = {"all": [HIGH_DEPTH], "first": HIGH_DEPTH, "iter": [HIGH_DEPTH, 7]}
    assert out["report"] == ["ok", expected.get(api, [HIGH_DEPTH])]
