"""`make test`'s pytest runs: the unit tier in parallel processes, then the integration tier.

The unit tier (``-m "not integration"``: no API server) runs under pytest-xdist, one worker per
core, each test file kept whole on one worker (``--dist loadfile``: module-scoped fixtures such
as the browser start once, and ``--test-order`` keeps its meaning). The integration tier runs
after it, in two workers by default whatever the number of cores: its tests mostly wait (for a
control plane to start, a scheduler to retry, a controller to act), so a second worker overlaps
those waits instead of competing for CPU, while each worker's own control planes cost memory,
not cores (docs/testing.md has the measurement). Ports never clash: each worker draws from its
own share (hack/localkube/ports.py).

Both tiers always run and both print pytest's summary; the exit code is non-zero when either
failed (pytest's 5, no test collected, only when neither tier ran a test). A last plain line
adds the two up: ``total: N passed, N failed, N skipped``.

    python hack/run-tests.py [--tier all|unit|integration] [--workers auto|N]
                             [--integration-workers N] [pytest args...]

Extra arguments go to both tiers (``--test-order=shuffle:7``, ``--jq-clock-scale=10``; the
``WLMAP_TEST_ORDER`` and ``WLMAP_JQ_CLOCK_SCALE`` variables work too). Each tier ends with
pytest's slowest 30 set-ups, calls and tear-downs of a second or more (``--durations``), so
every log of a run says where its time went; a ``--durations`` of the caller's replaces it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["main"]

_COUNT = re.compile(
    r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)\b"
)
_SUMMARY = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+|no tests ran)(?: in [\d.]+s.*)?\s*=*$")
_NOT_MARKED = "not integration"
#: every test marked ``integration`` lives here (tests/integration/conftest.py marks them)
INTEGRATION = "tests/integration"
#: where a tier's time went, in every log: the slowest phases (a module's plane starts in the
#: set-up of its first test), those under a second left out
DURATIONS = ["--durations=30", "--durations-min=1.0"]


@dataclass
class Tier:
    name: str
    args: list[str]
    code: int = -1
    summary: str = ""
    counts: Counter[str] = field(default_factory=Counter)


def _summary(tail: str) -> tuple[str, Counter[str]]:
    """pytest's closing line in ``tail`` (the last output of a run) and its counts."""
    for line in reversed(tail.splitlines()):
        text = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        if " in " in text and _SUMMARY.match(text):
            counts: Counter[str] = Counter()
            for number, word in _COUNT.findall(text):
                counts[word.rstrip("s") if word.startswith(("error", "warning")) else word] += int(
                    number
                )
            return text.strip("= "), counts
    return "", Counter()


def _run(tier: Tier) -> None:
    """Runs one tier, passing its output through as it comes; keeps the tail for the summary."""
    command = [sys.executable, "-m", "pytest", *tier.args]
    print(f"run-tests: {tier.name} tier: {' '.join(command[1:])}", flush=True)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    tail = b""
    out = sys.stdout.buffer
    try:
        while chunk := os.read(proc.stdout.fileno(), 65536):
            out.write(chunk)
            out.flush()
            tail = (tail + chunk)[-65536:]
        tier.code = proc.wait()
    except KeyboardInterrupt:  # Ctrl-C reached pytest too (one process group): let it finish
        tier.code = proc.wait()
        raise
    tier.summary, tier.counts = _summary(tail.decode(errors="replace"))


def _exit_code(tiers: list[Tier]) -> int:
    failed = [t.code for t in tiers if t.code not in (0, 5)]
    if failed:
        return failed[0]
    return 5 if all(t.code == 5 for t in tiers) else 0


def _parallel(workers: str, tier: str) -> list[str]:
    """pytest-xdist's arguments for ``workers`` processes, or none (one process)."""
    if workers in ("0", "1"):
        return []
    if importlib.util.find_spec("xdist") is None:
        print(f"run-tests: pytest-xdist is not installed: the {tier} tier runs in one process")
        return []
    # a worker that crashes (a segfault) fails the tier at once: replacing it has been seen to
    # stall xdist's controller, which would hang the run until CI's limit
    return ["-n", workers, "--dist", "loadfile", "--max-worker-restart=0"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", choices=["all", "unit", "integration"], default="all")
    parser.add_argument("--workers", default=os.environ.get("PYTEST_WORKERS", "auto"))
    parser.add_argument(
        "--integration-workers", default=os.environ.get("PYTEST_INTEGRATION_WORKERS", "2")
    )
    options, extra = parser.parse_known_args(argv)
    color = (
        ["--color=yes"] if sys.stdout.isatty() and not any("--color" in a for a in extra) else []
    )
    parallel = _parallel(options.workers, "unit")
    integration_parallel = _parallel(options.integration_workers, "integration")
    # without paths of the caller's, each tier collects only its own folders: collecting (and
    # so importing) the other tier's modules costs every process seconds of CPU for nothing
    # (tests/test_run_tests.py checks that integration tests live in tests/integration alone)
    own = not any(Path(a.split("::")[0]).exists() for a in extra if not a.startswith("-"))
    durations = [] if any(a.startswith("--durations") for a in extra) else DURATIONS
    tiers = []
    if options.tier in ("all", "unit"):
        ignore = [f"--ignore={INTEGRATION}"] if own else []
        unit = ["-m", _NOT_MARKED, *ignore, *parallel, *durations, *color, *extra]
        tiers.append(Tier("unit", unit))
    if options.tier in ("all", "integration"):
        folder = [INTEGRATION] if own else []
        integration = [
            "-m",
            "integration",
            *integration_parallel,
            *durations,
            *color,
            *extra,
            *folder,
        ]
        tiers.append(Tier("integration", integration))
    try:
        for tier in tiers:
            _run(tier)
    except KeyboardInterrupt:
        return 2
    if len(tiers) > 1:
        for tier in tiers:
            print(f"run-tests: {tier.name} tier: exit {tier.code}: {tier.summary or 'no summary'}")
        total = sum((t.counts for t in tiers), Counter())
        failed = total["failed"] + total["error"]
        if all(t.summary for t in tiers):
            print(f"total: {total['passed']} passed, {failed} failed, {total['skipped']} skipped")
    return _exit_code(tiers)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
