"""Reading the jq/gojq conformance suites in ../shared/jq-conformance, and running one case.

Two sources, per that folder's README:

* `derived/jq-tests-with-gojq-results.jsonl`: jq's `.test` files parsed, each case with what gojq
  does with it. Cases that need a CLI or host (`library_relevant: false`) are left out. Where
  gojq and jq disagree, gojq's outputs (or its compile/run error) are the expectation.
* `gojq/cli/test.yaml` cases of tier `core`/`core-tz` (flags `-c`/`-n` only): compile (exit 3 on
  failure), run on each input value (or null with `-n`), print gojq-style, compare the text.

A case id is `FILE:LINE` for jq's files and `test.yaml#INDEX` for gojq's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from workload_map.jq.decode import JsonDecodeError, iter_values, loads
from workload_map.jq.encode import dumps
from workload_map.jq.errors import JqCompileError, JqParseError, JqRuntimeError


@dataclass(frozen=True)
class Case:
    id: str
    program: str
    source: str  # "jq" or "yaml"
    record: dict[str, Any]


def jq_cases(shared: Path) -> list[Case]:
    path = shared / "jq-conformance" / "derived" / "jq-tests-with-gojq-results.jsonl"
    cases = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["library_relevant"]:
                cases.append(Case(f"{rec['file']}:{rec['line']}", rec["program"], "jq", rec))
    return cases


def yaml_cases(shared: Path) -> list[Case]:
    base = shared / "jq-conformance"
    index = json.loads((base / "derived" / "gojq-test-yaml-index.json").read_text("utf-8"))
    with (base / "gojq" / "cli" / "test.yaml").open(encoding="utf-8") as f:
        raw = yaml.load(f, Loader=yaml.BaseLoader)
    cases = []
    for entry, item in zip(index, raw, strict=True):
        if entry["tier"] in ("core", "core-tz"):
            rec = {**item, **entry}
            cases.append(Case(f"test.yaml#{entry['index']}", entry["program"], "yaml", rec))
    return cases


DIVERGENCE_LINE = re.compile(r"^- `([^`]+)`\s*(?:[-—:]+\s*)?(.*)$")
BINARY_SECTION = "v0.12.18 binary"


@dataclass(frozen=True)
class Divergence:
    reason: str
    against_binary: bool  # listed under a section checked against the gojq v0.12.18 binary


def divergences(path: Path) -> dict[str, Divergence]:
    """Case id → why it does not pass, from the checked-in list.

    Cases under a heading that mentions the v0.12.18 binary fail only against the suites' own
    expectations (which gojq v0.12.19 produced); where that binary is installed they must
    produce exactly its output instead.
    """
    out: dict[str, Divergence] = {}
    against_binary = False
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("#"):
            against_binary = BINARY_SECTION in line
            continue
        m = DIVERGENCE_LINE.match(line.strip())
        if m:
            out[m.group(1)] = Divergence(m.group(2), against_binary)
    return out


def _limits() -> Any:
    from workload_map import jq

    base = jq.DEFAULT_LIMITS
    try:
        return dataclasses.replace(base, max_results=None, timeout=20.0)
    except TypeError:
        return jq.Limits(max_results=None, timeout=20.0, max_depth=base.max_depth)


def _compile(program: str) -> Any:
    from workload_map import jq

    return jq.compile(program)


def _run(prog: Any, value: Any, limit: int) -> tuple[list[Any], JqRuntimeError | None]:
    """Up to `limit` outputs, then the run-time error that stopped the run (if any)."""
    outputs: list[Any] = []
    try:
        for out in prog.iter(value, limits=_limits()):
            outputs.append(out)
            if len(outputs) >= limit:
                break
    except JqRuntimeError as e:
        return outputs, e
    return outputs, None


def _same_value(ours: Any, expected_text: str) -> bool:
    from workload_map.jq.values import compare

    printed = loads(dumps(ours, None))
    return compare(printed, loads(expected_text)) == 0


def check_jq_case(case: Case) -> None:
    """Raises AssertionError describing the mismatch."""
    rec = case.record
    gojq = rec["gojq"]
    status = gojq["status"]
    if status == "gojq-rejects-input":
        try:
            loads(rec["input"])
        except JsonDecodeError:
            return
        raise AssertionError(f"input should be rejected as invalid JSON: {rec['input']!r}")
    must_not_compile = status == "gojq-compile-error" or (
        rec["kind"] == "fail" and status != "gojq-compiles"
    )
    try:
        prog = _compile(rec["program"])
    except (JqParseError, JqCompileError) as e:
        if must_not_compile:
            return
        raise AssertionError(f"compile error: {e}") from None
    if must_not_compile:
        raise AssertionError("program compiled; gojq rejects it")
    if rec["kind"] == "fail":  # gojq compiles it and fails at run time
        outputs, err = _run(prog, None, 1)
        assert err is not None and not outputs, f"expected the error {gojq.get('error')!r}"
        assert err.message == gojq["error"], f"{err.message!r} != {gojq['error']!r}"
        return
    value = loads(rec["input"])
    if status == "agree":
        expected = list(rec["expected"])
        exact = False
    else:
        expected = list(gojq["outputs"])
        exact = True
    outputs, err = _run(prog, value, len(expected) + 1)
    for i, want in enumerate(expected):
        if i >= len(outputs):
            raise AssertionError(
                f"only {len(outputs)} outputs (error: {err and err.message!r}); want {expected}"
            )
        got = outputs[i]
        if exact:
            assert dumps(got, None) == want, f"output {i}: {dumps(got, None)} != {want}"
        else:
            assert _same_value(got, want), f"output {i}: {dumps(got, None)} != {want}"
    assert len(outputs) == len(expected), f"extra output: {dumps(outputs[len(expected)], None)}"
    if exact and err is not None and "error" in gojq:
        assert err.message == gojq["error"], f"error {err.message!r} != {gojq['error']!r}"


@dataclass
class _Zone:
    tz: str | None

    def __enter__(self) -> None:
        self.saved = os.environ.get("TZ")
        if self.tz is not None:
            os.environ["TZ"] = self.tz
            time.tzset()

    def __exit__(self, *exc: object) -> None:
        if self.tz is None:
            return
        if self.saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = self.saved
        time.tzset()


def _yaml_inputs(rec: dict[str, Any]) -> Iterator[Any]:
    if rec["null_input"]:
        yield None
        return
    yield from iter_values(rec.get("input", ""))


def check_yaml_case(case: Case) -> None:
    rec = case.record
    exit_code = int(rec.get("exit_code", "5" if "error" in rec else "0"))
    try:
        prog = _compile(case.program)
    except (JqParseError, JqCompileError) as e:
        assert exit_code == 3, f"compile error {e}; the case expects exit code {exit_code}"
        return
    assert exit_code != 3, "program compiled; gojq rejects it"
    compact = any(a in ("-c", "--compact-output") for a in rec.get("args", []))
    zone = "<UTC-7>7" if rec["tier"] == "core-tz" else None
    out: list[str] = []
    errors: list[str] = []
    with _Zone(zone):
        for value in _yaml_inputs(rec):
            outputs, err = _run(prog, value, 100_000)
            out.extend(dumps(v, None if compact else 2) + "\n" for v in outputs)
            if err is not None:
                errors.append(err.message)
    text = "".join(out)
    assert text == rec.get("expected", ""), f"stdout:\n{text}\nwant:\n{rec.get('expected', '')}"
    want_errors = [line for line in rec.get("error", "").splitlines() if line.strip()]
    if not want_errors:
        assert not errors, f"unexpected errors {errors}"
        return
    for line in want_errors:
        assert any(m.startswith(line) or m.endswith(line) or line.endswith(m) for m in errors), (
            f"error {line!r} not among {errors}"
        )


def check_against_binary(case: Case, gojq: Path) -> None:
    """Our outputs and error messages equal those of the gojq binary on the same case."""
    from tests.jq.gojq_oracle import run_gojq

    rec = case.record
    if case.source == "jq":
        null_input, text, compact = rec["kind"] == "fail", rec.get("input", "null"), True
    else:
        null_input, text = rec["null_input"], rec.get("input", "")
        compact = any(a in ("-c", "--compact-output") for a in rec.get("args", []))
    args = (["-c"] if compact else []) + (["-n"] if null_input else []) + [case.program]
    env = {"TZ": "<UTC-7>7" if rec.get("tier") == "core-tz" else "UTC"}
    proc = run_gojq(gojq, args, text, env)
    try:
        prog = _compile(case.program)
    except (JqParseError, JqCompileError) as e:
        assert proc.returncode == 3, f"we reject the program ({e}); gojq runs it"
        return
    assert proc.returncode != 3, f"gojq rejects the program: {proc.stderr}"
    out: list[str] = []
    errors: list[str] = []
    with _Zone(env["TZ"] if rec.get("tier") == "core-tz" else None):
        values = [None] if null_input else list(iter_values(text))
        for value in values:
            outputs, err = _run(prog, value, 100_000)
            out.extend(dumps(v, None if compact else 2) + "\n" for v in outputs)
            if err is not None:
                errors.append(err.message)
    assert "".join(out) == proc.stdout, f"stdout:\n{''.join(out)}\ngojq:\n{proc.stdout}"
    theirs = [line.removeprefix("gojq: ") for line in proc.stderr.splitlines() if line]
    assert errors == theirs, f"errors {errors} != gojq's {theirs}"
