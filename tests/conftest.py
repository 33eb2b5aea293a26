"""Fixtures shared by every test package.

``../shared`` (upstream manifests, CRDs, jq conformance suites) exists beside the checkout on the
project's machines but not in a user's clone; tests that read it take the ``shared_dir`` fixture
and skip with a reason where it is absent.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

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


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether golden files are rewritten (review the diff afterwards)."""
    flag = bool(request.config.getoption("--update-golden"))
    return flag or os.environ.get("WLMAP_UPDATE_GOLDEN") == "1"
