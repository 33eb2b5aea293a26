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

import pytest

DEPTH = 10000

SCRIPT = textwrap.dedent(
    """
    import json, sys
    before = sys.getrecursionlimit()
    from workload_map import jq
    from workload_map.jq import encoding

    DEPTH = int(sys.argv[1])
    text = "[" * DEPTH + "1" + "]" * DEPTH
    value = encoding.loads(text)
    report = {"limit_before": before, "limit_after": sys.getrecursionlimit(), "results": {}}

    def run(name, program, **kw):
        try:
            out = jq.compile(program, variables=["v"]).all(
                value, variables={"v": value}, limits=jq.Limits(1000, 60, 1000)
            )
            report["results"][name] = ["ok", [encoding.dumps(x, None) for x in out]]
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
