"""Fixtures shared by every test package.

``../shared`` (upstream manifests, CRDs, jq conformance suites) exists beside the checkout on the
project's machines but not in a user's clone; tests that read it take the ``shared_dir`` fixture
and skip with a reason where it is absent.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]

# Property tests are judged on what they find, never on how fast a loaded machine runs them:
# no per-example deadline and no too-slow health check, for every @given (Hypothesis's own
# "ci" profile, loaded where $CI is set, already does this; a user's `make test` gets it too).
if settings._current_profile == "default":
    settings.register_profile(
        "wlmap", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
    )
    settings.load_profile("wlmap")

# A run started in the background of a non-interactive shell (`make test &`, some CI runners)
# inherits SIGINT ignored, and so would every process the tests start: the tests that press
# Ctrl-C on `wlmap get -w` or on a control plane would see nothing happen. A handler (unlike
# SIG_IGN) is reset to the default at exec, so the children get Ctrl-C back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def find_shared() -> Path | None:
    """The shared folder: $WLMAP_SHARED, else ../shared beside the checkout."""
    env = os.environ.get("WLMAP_SHARED")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT.parent / "shared")
    for candidate in candidates:
        if (candidate / "realworld").is_dir():
            return candidate
    return None


SHARED = find_shared()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if SHARED is None:
        pytest.skip(
            "../shared (upstream manifests and conformance suites) is not beside this checkout"
        )
    return SHARED


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files instead of comparing (or set WLMAP_UPDATE_GOLDEN=1)",
    )

    parser.addoption(
        "--test-order",
        default="",
        metavar="reverse|shuffle[:SEED]",
        help="run modules, and the tests of each module, reversed or shuffled (SEED printed), "
        "to find tests that depend on each other's state or order (or set WLMAP_TEST_ORDER)",
    )
    parser.addoption(
        "--jq-clock-scale",
        default="",
        metavar="FACTOR",
        help="make jq deadlines in this process see CPU time FACTOR times over (a machine FACTOR "
        "times slower), to find tests whose work has too little room under its deadline "
        "(or set WLMAP_JQ_CLOCK_SCALE)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # under pytest-xdist each worker collects, and all must reorder alike: the controller
    # resolves the order (a shuffle's seed drawn once) and hands it to them
    given = getattr(config, "workerinput", {}).get(_ORDER_INPUT)
    order = given or str(config.getoption("--test-order") or os.environ.get("WLMAP_TEST_ORDER", ""))
    if order:
        config.stash[_ORDER_KEY] = _resolved(order)
    _scale_jq_clock(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's hook on the controller, once per worker it starts."""
    used = node.config.stash.get(_ORDER_KEY, None)
    if used:
        node.workerinput[_ORDER_INPUT] = used


def _scale_jq_clock(config: pytest.Config) -> None:
    text = str(config.getoption("--jq-clock-scale") or os.environ.get("WLMAP_JQ_CLOCK_SCALE", ""))
    if not text:
        return
    try:
        factor = float(text)
    except ValueError:
        raise pytest.UsageError(f"--jq-clock-scale: expected a number, got {text!r}") from None
    if not factor > 0:
        raise pytest.UsageError(f"--jq-clock-scale: expected a positive number, got {text!r}")
    from workload_map.jq import closures, cpuclock, program

    def scaled() -> float:
        return cpuclock.clock() * factor

    closures.clock = scaled
    program.clock = scaled  # type: ignore[attr-defined]


def _resolved(order: str) -> str:
    """``order`` checked, a shuffle given its seed (drawn when absent): the order to replay."""
    import random

    if order == "reverse":
        return order
    name, _, seed_text = order.partition(":")
    if name != "shuffle":
        raise pytest.UsageError(f"--test-order: expected reverse or shuffle[:SEED], got {order!r}")
    try:
        seed = int(seed_text) if seed_text else random.SystemRandom().randrange(10**6)
    except ValueError:
        raise pytest.UsageError(f"--test-order: the seed must be an integer: {order!r}") from None
    return f"shuffle:{seed}"


def _reordered(items: list[pytest.Item], order: str) -> tuple[list[pytest.Item], str]:
    """``items`` reversed or shuffled module by module (a module's tests stay together, so
    module-scoped control planes start once); the order actually used, to replay it."""
    import random

    used = _resolved(order)
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(str(item.path), []).append(item)
    groups = list(modules.values())
    if used == "reverse":
        groups.reverse()
        for group in groups:
            group.reverse()
        return [i for g in groups for i in g], used
    rng = random.Random(int(used.partition(":")[2]))
    rng.shuffle(groups)
    for group in groups:
        rng.shuffle(group)
    return [i for g in groups for i in g], used


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    used = config.stash.get(_ORDER_KEY, None)
    if used:
        items[:], _ = _reordered(items, used)


_ORDER_KEY = pytest.StashKey[str]()
_ORDER_INPUT = "wlmap_test_order"


def _xdist_worker(config: pytest.Config) -> bool:
    """Whether this process is one of pytest-xdist's workers (the controller reports)."""
    return hasattr(config, "workerinput")


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    used = session.config.stash.get(_ORDER_KEY, None)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if used and reporter is not None and not _xdist_worker(session.config):
        # at the start too: a run killed early still says its order
        reporter.write_line(f"test order: {used}")


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    used = config.stash.get(_ORDER_KEY, None)
    if used:
        terminalreporter.write_line(f"test order: {used} (--test-order={used} replays it)")


def _child_processes() -> dict[int, str]:
    """This process's running children (Linux /proc; empty elsewhere): pid → command line."""
    me, out = os.getpid(), {}
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else ():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != me or fields[0] == "Z":  # a zombie holds nothing but its pid
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # gone in between
        out[int(entry.name)] = " ".join(a.decode(errors="replace") for a in argv if a)[:200]
    return out


def _session_children() -> set[int]:
    """Children that outlive a module on purpose: the session's control planes."""
    plane = sys.modules.get("hack.localkube.plane")
    if plane is None:
        return set()
    with plane._LIVE_LOCK:
        planes = list(plane._LIVE)
    return {pid for plane in planes for pid in plane.pids()}


@pytest.fixture(scope="module", autouse=True)
def _no_processes_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module's servers, operators and commands end with it: one left running holds ports,
    CPU and watches that make a later module flaky, so it is reported (as a warning, with its
    command line) when the module's fixtures are done."""
    before = set(_child_processes())
    yield
    left = {
        pid: argv
        for pid, argv in _child_processes().items()
        if pid not in before and pid not in _session_children()
    }
    if left:
        import warnings

        listed = "; ".join(f"{pid}: {argv}" for pid, argv in sorted(left.items()))
        warnings.warn(
            pytest.PytestWarning(f"{request.node.nodeid} left processes running: {listed}"),
            stacklevel=1,
        )


@pytest.fixture(scope="module", autouse=True)
def _settled_heap() -> None:
    """Each module starts with what earlier modules left alive collected and frozen.

    jq deadlines count the evaluating thread's CPU time, and a collection is charged to the
    thread that triggers it: late in a full run a gen-2 collection walks the heap of thousands of
    earlier tests (hundreds of ms), enough to trip a test's short deadline. Frozen objects are
    never walked again, so a collection costs what the module itself allocated (the operator
    freezes its synced caches for the same reason).
    """
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether golden files are rewritten (review the diff afterwards)."""
    flag = bool(request.config.getoption("--update-golden"))
    return flag or os.environ.get("WLMAP_UPDATE_GOLDEN") == "1"
