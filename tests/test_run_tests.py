"""hack/run-tests.py, `make test`'s two tiers: both run, both summaries print, either failing
fails the run, and a last plain line adds them up (CI reads the closing line)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "hack" / "run-tests.py"


def _runner() -> ModuleType:
    name = "wlmap_run_tests"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before exec: its dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_summaries_are_read_plain_or_coloured() -> None:
    summary = _runner()._summary
    text, counts = summary(
        "x\n= 6 failed, 8889 passed, 60 skipped, 4 xfailed, 13 errors in 537.84s (0:08:57) =\n"
    )
    assert text.startswith("6 failed, 8889 passed")
    assert counts == {"failed": 6, "passed": 8889, "skipped": 60, "xfailed": 4, "error": 13}
    coloured = "\x1b[32m== \x1b[1m2 failed\x1b[0m, \x1b[32m12 passed\x1b[0m in 3.12s ==\x1b[0m\n"
    assert summary(coloured)[1] == {"failed": 2, "passed": 12}
    assert summary("no tests ran in 0.01s\n") == ("no tests ran in 0.01s", {})
    assert summary("a crash, no summary\n") == ("", {})


def test_either_tier_failing_fails_the_run() -> None:
    runner = _runner()

    def code(*codes: int) -> int:
        return int(runner._exit_code([runner.Tier(str(c), [], code=c) for c in codes]))

    assert code(0, 0) == 0
    assert code(1, 0) == 1 and code(0, 1) == 1 and code(0, 2) == 2
    assert code(5, 0) == 0 and code(0, 5) == 0  # a selection that only one tier has
    assert code(5, 5) == 5  # nothing ran at all: CI's "ran no test"


def test_each_tier_reports_its_slowest_phases_unless_the_caller_asks_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runner = _runner()
    ran: list[list[str]] = []
    monkeypatch.setattr(runner, "_run", lambda tier: ran.append(tier.args))
    runner.main(["--workers", "1"])
    assert [a for args in ran for a in args if a.startswith("--durations")] == [
        *runner.DURATIONS,
        *runner.DURATIONS,
    ]
    ran.clear()
    runner.main(["--workers", "1", "--durations=5"])
    assert [a for args in ran for a in args if a.startswith("--durations")] == ["--durations=5"] * 2


def test_integration_tests_live_in_the_integration_folder() -> None:
    """The integration tier collects tests/integration alone: a test marked elsewhere would
    be deselected by the unit tier and never collected by the integration one."""
    marked = re.compile(r"mark\.integration\b|pytestmark\s*=.*\bintegration\b")
    stray = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if "integration" not in path.relative_to(ROOT / "tests").parts[:1]
        and path.name != Path(__file__).name
        and marked.search(path.read_text(encoding="utf-8"))
    ]
    assert stray == []


def test_both_tiers_run_and_report(tmp_path: Path) -> None:
    """One run of the runner as `make test` makes it, on files of this test's own: the unit
    tier under xdist fails (two budgets), the integration tier passes, and the run fails with
    both summaries and the total. --test-order and --jq-clock-scale reach every worker: each
    worker collects, and all must reorder alike (else xdist refuses: different tests
    collected), and each scales its own jq clock."""
    for name in ("a", "b"):
        # the CPU clock under the scale is injected (each look a millisecond, as in
        # test_jq_clock_scale.py): at 1000x the budget runs out by the looks counted
        (tmp_path / f"test_{name}.py").write_text(
            "import itertools\n"
            "from workload_map import jq\n"
            "from workload_map.jq import cpuclock\n"
            + "".join(f"def test_{name}{i}():\n    pass\n" for i in range(6))
            + f"def test_{name}_budget(monkeypatch):\n"
            "    looks = itertools.count()\n"
            "    monkeypatch.setattr(cpuclock, 'clock', lambda: next(looks) * 0.001)\n"
            "    jq.compile('[range(20000)] | length').all(None, limits=jq.Limits(timeout=1.0))\n"
        )
    (tmp_path / "test_live.py").write_text(
        "import pytest\n\n@pytest.mark.integration\ndef test_live():\n    pass\n"
    )
    # the project's conftest as a plugin: the test files live outside tests/
    plugins = ["-p", "no:cacheprovider", "-p", "tests.conftest"]
    options = ["--test-order=shuffle", "--jq-clock-scale=1000"]
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--workers", "2", *plugins, *options, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = run.stdout
    assert run.returncode == 1, out[-3000:]
    # both tiers ran in parallel processes (the integration tier's two workers by default)
    assert out.count("-n 2 --dist loadfile") == 2, out[-3000:]
    assert "Different tests were collected" not in out, out[-3000:]
    assert len(re.findall(r"^test order: shuffle:\d+$", out, flags=re.M)) == 2  # one per tier
    assert out.count("JqDeadlineError") >= 2
    # (under xdist the workers deselect, and the summary does not count them)
    assert "run-tests: unit tier: exit 1: 2 failed, 12 passed" in out, out[-3000:]
    assert "run-tests: integration tier: exit 0: 1 passed" in out, out[-3000:]
    assert out.splitlines()[-1] == "total: 13 passed, 2 failed, 0 skipped"
    # each tier's log says where its time went (the slowest phases; none here is a second)
    assert out.count("slowest 30 durations") == 2, out[-3000:]
    assert out.count("--durations=30 --durations-min=1.0") == 2
