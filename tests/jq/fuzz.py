"""A seeded grammar fuzzer for the jq engine: random programs by random inputs under a deadline.

Each case must end with outputs or an error of the ``JqError`` family (never another Python
exception), within the deadline times a small factor of CPU time (a single expensive step that
never looks at the deadline overruns it), and within a memory bound. ``tests/jq/test_fuzz.py``
runs a short seeded round in ``make test``; ``make fuzz`` runs a long one::

    python -m tests.jq.fuzz --count 300000 --seed 1 --deadline 0.5 --factor 2

No fuzzing library fits: hypothesis shrinks but runs slowly per example and has no jq grammar,
and atheris fuzzes bytes (almost every random text is a parse error); a grammar that builds
programs from the constructs and builtins the engine has reaches its evaluation paths instead.
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from tests.jq.workclock import Measured, WorkClock
from workload_map import jq

# builtins by arity, the ones the fuzzer found trouble with included; input/inputs are refused
# by `wlmap jq` and the library alike, so they are left out
_BUILTINS_0 = (
    "length utf8bytelength not keys keys_unsorted values add any all flatten floor sqrt "
    "tostring tonumber tojson fromjson type infinite nan isinfinite isnan isnormal isvalid "
    "sort unique reverse min max first last paths leaf_paths tostream to_entries from_entries "
    "ascii_downcase ascii_upcase explode implode ltrimstr recurse env builtins input_filename "
    "todate fromdate gmtime mktime localtime now abs toarray trim ltrim rtrim halt "
    "combinations splits ascii @base64 @base64d @text @json @html @uri @csv @tsv @sh getpath "
    "error empty debug stderr objects arrays scalars iterables numbers strings nulls "
    "booleans finites normals not ltrimstr tojson @urid significand gamma frexp modf logb "
    "exp10 log2 ceil round trunc"
).split()
_BUILTINS_1 = (
    "map select has in contains inside startswith endswith ltrimstr rtrimstr split join "
    "test match capture scan splits sub flatten range limit first last nth until_ repeat "
    "recurse walk with_entries min_by max_by sort_by group_by unique_by path paths del "
    "to_entries getpath delpaths error tojson combinations fromstream truncate_stream "
    "strftime strptime todate indices index rindex any all isempty add pick "
    "halt_error splits ascii implode debug getpath ltrimstr tostream significand"
).split()
_BUILTINS_2 = (
    "limit skip nth range sub gsub test match setpath until while recurse any all "
    "pow log atan2 jn yn ldexp fmin fmax splits getpath combinations"
).split()
_NUMBERS = (
    "0 1 2 3 -1 -2 10 100 1000 1.5 -0.5 1e3 1e20 1e300 -1e20 9223372036854775807 "
    "-9223372036854775808 100000000000000000000 infinite nan -infinite 300000 0.1"
).split()
_STRINGS = ['"a"', '"b"', '""', '"x"', '"abc"', '"a,b"', '"%Y-%m-%dT%H:%M:%SZ"', '"\\\\d+"']
_FIELDS = ["a", "b", "c", "x", "items", "spec"]


@dataclass
class _Gen:
    rng: random.Random
    depth: int = 0
    funcs: list[tuple[str, int]] = field(default_factory=list)
    vars: list[str] = field(default_factory=list)

    def pick(self, items: list[str] | tuple[str, ...]) -> str:
        return items[self.rng.randrange(len(items))]

    def literal(self) -> str:
        r = self.rng.random()
        if r < 0.5:
            return self.pick(_NUMBERS)
        if r < 0.8:
            return self.pick(_STRINGS)
        return self.pick(["null", "true", "false", "[]", "{}", "[1,2,3]", '{"a":1}'])

    def term(self) -> str:
        r = self.rng.random()
        if self.depth > 4 or r < 0.25:
            return self.pick(
                [".", f".{self.pick(_FIELDS)}", ".[0]", ".[-1]", ".[]", ".[]?", "..", "$__loc__"]
                + ([f"${v}" for v in self.vars] or [".a?"])
                + [self.literal()] * 3
            )
        self.depth += 1
        try:
            return self._compound()
        finally:
            self.depth -= 1

    def _compound(self) -> str:
        choice = self.rng.randrange(22)
        e = self.expr
        if choice == 0:
            return f"{e()} | {e()}"
        if choice == 1:
            return f"{e()}, {e()}"
        if choice == 2:
            op = self.pick(["+", "-", "*", "/", "%", "==", "!=", "<", ">=", "and", "or", "//"])
            return f"({e()}) {op} ({e()})"
        if choice == 3:
            return f"[{e()}]"
        if choice == 4:
            key = self.pick([self.pick(_FIELDS), f"({e()})", f'"{self.pick(_FIELDS)}"'])
            return f"{{{key}: {e()}}}"
        if choice == 5:
            return f"if {e()} then {e()} else {e()} end"
        if choice == 6:
            return f"try {e()} catch {e()}"
        if choice == 7:
            return f"({e()})?"
        if choice == 8:
            name = f"v{len(self.vars)}"
            self.vars.append(name)
            try:
                return f"{e()} as ${name} | {e()}"
            finally:
                self.vars.pop()
        if choice == 9:
            name = f"v{len(self.vars)}"
            self.vars.append(name)
            try:
                return f"reduce {e()} as ${name} ({e()}; {e()})"
            finally:
                self.vars.pop()
        if choice == 10:
            name = f"v{len(self.vars)}"
            self.vars.append(name)
            try:
                return f"foreach {e()} as ${name} ({e()}; {e()}; {e()})"
            finally:
                self.vars.pop()
        if choice == 11:
            return f"label $out | {e()} | ., break $out"
        if choice == 12:
            name = f"f{len(self.funcs)}"
            self.funcs.append((name, 0))
            try:
                body = e()  # may call itself: recursion runs into the depth limit
                return f"def {name}: {body}; {e()}"
            finally:
                self.funcs.pop()
        if choice == 13 and self.funcs:
            return self.funcs[-1][0]
        if choice in (14, 15, 16):
            name = self.pick(_BUILTINS_0)
            return name
        if choice in (17, 18, 19):
            name = self.pick(_BUILTINS_1).rstrip("_")
            return f"{name}({e()})"
        if choice == 20:
            name = self.pick(_BUILTINS_2)
            return f"{name}({e()}; {e()})"
        return f"{self.term()}{self.pick(['.a', '[0]', '[]', '[1:]', '?', '.b?', '[-1:]'])}"

    def expr(self) -> str:
        return self.term()


def program(rng: random.Random) -> str:
    """One random program of the grammar."""
    return _Gen(rng).expr()


def _deep(n: int) -> Any:
    v: Any = 0
    for _ in range(n):
        v = {"a": [v]}
    return v


def inputs() -> list[Any]:
    """The inputs every program runs on: scalars, nested, wide and deep values."""
    return [
        None,
        1,
        -2.5,
        "abc",
        "2015-03-05T23:51:47Z",
        [1, 2, 3],
        {"a": 1, "b": [1, "x", None], "c": {"a": {"b": 2}}},
        {"items": [{"a": i, "b": str(i)} for i in range(50)], "spec": {"x": [1, 2]}},
        list(range(2000)),
        _deep(300),
        [[0], 1, [[1, 0], 2], [[1, 0]], [[1]]],
    ]


@dataclass
class Report:
    """What a round found: counts, and the first failures of each kind."""

    cases: int = 0
    programs: int = 0
    compile_errors: int = 0
    jq_errors: int = 0
    crashes: list[tuple[str, str, str]] = field(default_factory=list)
    overruns: list[tuple[str, str, float]] = field(default_factory=list)
    peak_bytes: int = 0
    worst_cpu: float = 0.0
    worst: str = ""
    #: with a work clock: the most profile events between two looks at the deadline clock
    longest_gap: int = 0
    longest_gap_program: str = ""


class _FullCollections:
    """The process CPU time full (oldest-generation) garbage collections took: the deadline
    does not charge them to an evaluation (``workload_map.jq.cpuclock``), so neither does the
    overrun check (a recursion that holds 200 000 iterators triggers several)."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._started: float | None = None

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.process_time()
        elif self._started is not None:
            self.spent += time.process_time() - self._started
            self._started = None


def _quiet(_text: str) -> None:
    """`debug`/`stderr` output is dropped."""


def run(
    count: int,
    seed: int,
    deadline: float,
    factor: float,
    *,
    memory: bool = True,
    progress: Callable[[Report], None] | None = None,
    skip: int = 0,
    work: WorkClock | None = None,
) -> Report:
    """``count`` evaluations (programs by inputs) from ``seed``, each under ``deadline`` s.

    With ``work`` (installed as the deadline clock: ``workclock.installed``) the cost of an
    evaluation is its work in profile events, not CPU seconds, and the most work between two
    looks at the clock is reported (``longest_gap``): a check that holds on any machine."""
    rng = random.Random(seed)
    values = inputs()
    limits = jq.Limits(max_results=1000, timeout=deadline, max_depth=1000)
    report = Report()
    full = _FullCollections()
    gc.callbacks.append(full)
    if memory:
        tracemalloc.start()
    try:
        while report.cases < count:
            text = program(rng)
            report.programs += 1
            try:
                prog = jq.compile(text)
            except jq.JqError:
                report.compile_errors += 1
                continue
            except Exception as e:
                report.crashes.append((text, "<compile>", f"{type(e).__name__}: {e}"))
                continue
            chosen = rng.sample(values, 3)
            if report.programs <= skip:  # replaying a seed up to a program of interest
                continue
            for value in chosen:
                report.cases += 1
                # the process's CPU: a deep evaluation runs on the deep-stack thread, whose
                # time the caller's thread_time misses (so did the overruns of its unwinding);
                # less full collections, which the deadline does not charge either
                started = time.process_time()
                collected = full.spent
                with work.measure() if work is not None else nullcontext(Measured()) as run:
                    try:
                        prog.all(value, limits=limits, stderr=_quiet)
                    except jq.JqError:
                        report.jq_errors += 1
                    except Exception as e:
                        name = type(value).__name__
                        report.crashes.append((text, name, f"{type(e).__name__}: {e}"[:300]))
                if work is None:
                    cpu = time.process_time() - started - (full.spent - collected)
                else:
                    cpu = work.seconds(run.events)
                    if run.longest_gap > report.longest_gap:
                        report.longest_gap, report.longest_gap_program = run.longest_gap, text
                if cpu > report.worst_cpu:
                    report.worst_cpu, report.worst = cpu, text
                if cpu > deadline * factor:
                    report.overruns.append((text, type(value).__name__, cpu))
                    if progress is not None:
                        print(f"  overrun {cpu:.2f} s CPU: {text!r}", file=sys.stderr, flush=True)
            if memory:
                _, peak = tracemalloc.get_traced_memory()
                report.peak_bytes = max(report.peak_bytes, peak)
                tracemalloc.reset_peak()
            if progress is not None and report.programs % 1000 == 0:
                progress(report)
    finally:
        gc.callbacks.remove(full)
        if memory:
            tracemalloc.stop()
    return report


def _iter_lines(report: Report) -> Iterator[str]:
    yield (
        f"{report.cases} evaluations of {report.programs} programs: "
        f"{report.compile_errors} compile errors, {report.jq_errors} jq errors, "
        f"{len(report.crashes)} crashes, {len(report.overruns)} overruns; "
        f"peak {report.peak_bytes / 1e6:.0f} MB, worst {report.worst_cpu:.2f} s CPU"
    )
    for text, kind, error in report.crashes[:20]:
        yield f"  crash on {kind}: {text!r}: {error}"
    for text, kind, cpu in report.overruns[:20]:
        yield f"  overrun on {kind}: {text!r}: {cpu:.2f} s CPU"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--deadline", type=float, default=0.5)
    parser.add_argument("--factor", type=float, default=2.0)
    parser.add_argument("--max-mb", type=float, default=1024.0)
    parser.add_argument("--skip", type=int, default=0, help="generate but do not run the first N")
    args = parser.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4000))

    def progress(r: Report) -> None:
        print(next(_iter_lines(r)), file=sys.stderr, flush=True)

    # tracemalloc slows allocation-heavy steps several times over, which would count as
    # overruns: the long round bounds the process's peak resident size instead
    report = run(
        args.count,
        args.seed,
        args.deadline,
        args.factor,
        memory=False,
        progress=progress,
        skip=args.skip,
    )
    report.peak_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    for line in _iter_lines(report):
        print(line)
    bad = report.crashes or report.overruns or report.peak_bytes > args.max_mb * 1e6
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
