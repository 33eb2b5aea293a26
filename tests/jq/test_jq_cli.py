"""`wlmap jq`, run in-process: flags, output layouts, messages and exit codes like gojq's.

Besides the hand-written cases, gojq's own CLI suite (test.yaml, tier `cli`) runs through it for
every case that uses only flags `wlmap jq` has; divergences are listed in DIVERGENCES.md.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SHARED
from tests.jq.conformance_cases import divergences
from workload_map.cli.jq_cli import main, parse_flags


def run(args: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, io.StringIO(stdin), out, err)
    return code, out.getvalue(), err.getvalue()


def test_pretty_and_compact_output() -> None:
    code, out, _ = run(["."], '{"b":1,"a":[1.0,{}]} 2')
    assert code == 0
    assert out == '{\n  "a": [\n    1.0,\n    {}\n  ],\n  "b": 1\n}\n2\n'
    assert run(["-c", ".[]"], '{"b":1,"a":[1,2]}')[1] == "[1,2]\n1\n"
    assert run(["--tab", "."], "[1]")[1] == "[\n\t1\n]\n"
    assert run(["--indent", "1", "."], "[1]")[1] == "[\n 1\n]\n"
    assert run(["--indent=0", "."], '{"a":[1]}')[1] == '{\n"a": [\n1\n]\n}\n'


def test_raw_join_and_nul_output() -> None:
    assert run(["-r", ".[]"], '["a\\nb", 1]')[1] == "a\nb\n1\n"
    assert run(["-j", ".[]"], '["a", 1, [2]]')[1] == "a1[\n  2\n]"
    assert run(["--raw-output0", ".[]"], '["a", "b"]')[1] == "a\x00b\x00"
    code, _, err = run(["--raw-output0", "."], '"a\\u0000"')
    assert code == 5 and "cannot output a string containing NUL character" in err


def test_null_slurp_and_raw_input() -> None:
    assert run(["-n", "1+1"], "not json")[1] == "2\n"
    assert run(["-c", "-s", "."], "1 2 [3]")[1] == "[1,2,[3]]\n"
    assert run(["-c", "-R", "."], "a\nb\n")[1] == '"a"\n"b"\n'
    assert run(["-c", "-Rs", "."], "a\nb\n")[1] == '"a\\nb\\n"\n'
    assert run(["-cn", "[1,2]"])[1] == "[1,2]\n"


def test_variables() -> None:
    code, out, _ = run(["-c", "-n", "--arg", "x", "1", "--argjson", "y", '{"a":2}', "[$x, $y]"])
    assert (code, out) == (0, '["1",{"a":2}]\n')
    code, out, _ = run(["-nc", "$ARGS", "--args", "a", "b"])
    assert out == '{"named":{},"positional":["a","b"]}\n'
    code, out, _ = run(["-nc", "$ARGS.positional", "--jsonargs", "1", "{}"])
    assert out == "[1,{}]\n"
    code, _, err = run(["-n", "--argjson", "x", "{", "$x"])
    assert code == 5 and err.startswith("wlmap: invalid json: $x")


def test_exit_status() -> None:
    assert run(["-e", "."], "1")[0] == 0
    assert run(["-e", "."], "null")[0] == 1
    assert run(["-e", "."], "1 false")[0] == 1
    assert run(["-e", "empty"], "1")[0] == 4


def test_errors_and_exit_codes() -> None:
    code, out, err = run([".a"], '{"a":1} 1 {"a":2}')
    assert (code, out) == (5, "1\n2\n")
    assert err == "wlmap: expected an object but got: number (1)\n"
    code, _, err = run(["-n", '"x" | error'])
    assert (code, err) == (5, "wlmap: error: x\n")
    code, _, err = run(["."], "[1,")
    assert code == 5 and err == "wlmap: invalid json: <stdin>\n    [1,\n       ^  unexpected EOF\n"
    code, _, err = run([". a"], "1")
    assert code == 3
    assert err == 'wlmap: invalid query: . a\n    . a\n      ^  unexpected token "a"\n'
    code, _, err = run(["foo"], "1")
    assert (code, err) == (3, "wlmap: compile error: function not defined: foo/0\n")
    assert run(["--foo", "."])[0] == 2
    assert run(["-q", "."])[0] == 2
    assert run(["--indent", "10", "."], "1")[0] == 5


def test_halt() -> None:
    code, out, err = run(["-n", '1, ("bye\\n" | halt_error(3)), 2'])
    assert (code, out, err) == (3, "1\n", "bye\n")
    code, out, err = run(["-n", "{} | halt_error"])
    assert (code, err) == (5, "{}\n")
    assert run(["-n", "1, halt, 2"])[:2] == (0, "1\n")


def test_flag_parsing() -> None:
    opts = parse_flags(["-cr", "--indent=3", ".", "f1", "--", "-x"])
    assert opts.compact and opts.raw and opts.indent == 3
    assert opts.rest == [".", "f1", "-x"]


def test_files(tmp_path: Path) -> None:
    f = tmp_path / "in.json"
    f.write_text('{"a": 1}')
    assert run(["-c", ".a", str(f)])[1] == "1\n"
    code, out, err = run(["-c", ".", str(tmp_path / "missing.json"), str(f)])
    assert (code, out) == (5, '{"a":1}\n') and "missing.json: no such file or directory" in err
    q = tmp_path / "q.jq"
    q.write_text(".a\n| . + 1")
    assert run(["-f", str(q), str(f)])[1] == "2\n"
    code, out, _ = run(["-nc", "--slurpfile", "s", str(f), "--rawfile", "r", str(f), "[$s, $r]"])
    assert out == '[[{"a":1}],"{\\"a\\": 1}"]\n'


# ---------------------------------------------------------------------------------------------
# gojq's CLI suite

SUPPORTED_REASONS = {
    "extra-positional-args",
    "input-not-json",
    "no-query-arg",
    "uses:halt",
    "json-parse-error",
    "uses:$ARGS/named-vars",
}
UNSUPPORTED_FLAG_REASONS = {
    "flag:--yaml-input", "flag:-L", "flag:--stream", "flag:-C", "flag:--yaml-output",
    "flag:--color-output", "flag:--library-path", "flag:-Ltestdata", "flag:-L=testdata",
}  # fmt: skip
DIVERGENCES = divergences(Path(__file__).with_name("DIVERGENCES.md"))


def _cli_cases() -> list[Any]:
    if SHARED is None:
        return []
    base = SHARED / "jq-conformance"
    index = json.loads((base / "derived" / "gojq-test-yaml-index.json").read_text("utf-8"))
    with (base / "gojq" / "cli" / "test.yaml").open(encoding="utf-8") as f:
        raw = yaml.load(f, Loader=yaml.BaseLoader)
    params = []
    for entry, item in zip(index, raw, strict=True):
        if entry["tier"] != "cli":
            continue
        reasons = set(entry["reasons"])
        flags = {r for r in reasons if r.startswith("flag:")}
        if (reasons - flags) - SUPPORTED_REASONS or flags & UNSUPPORTED_FLAG_REASONS:
            continue
        case_id = f"test.yaml#{entry['index']}"
        marks = []
        if case_id in DIVERGENCES:
            marks.append(pytest.mark.xfail(strict=True, reason=DIVERGENCES[case_id].reason))
        params.append(pytest.param(item, id=case_id, marks=marks))
    return params


@pytest.mark.shared
@pytest.mark.parametrize("case", _cli_cases())
def test_gojq_cli_suite(case: dict[str, Any], shared_dir: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(shared_dir / "jq-conformance" / "gojq" / "cli")
    code, out, err = run(list(case.get("args", [])), case.get("input", ""))
    want_code = int(case.get("exit_code", "5" if "error" in case else "0"))
    assert out == case.get("expected", ""), f"stdout {out!r}\nstderr {err!r}"
    assert code == want_code, f"exit code {code}, stderr {err!r}"
    want_err = case.get("error", "")
    ours = err.replace("wlmap: ", "")
    if want_err:
        assert ours.startswith(want_err.rstrip("\n")) or ours.rstrip("\n").endswith(
            want_err.rstrip("\n")
        ), f"stderr {ours!r}\nwant {want_err!r}"
