"""Helpers for in-process CLI tests: run ``main`` with injected streams, env and cluster."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.fake_cluster import FakeAPI
from workload_map.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME: no kubeconfig, no config file."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def wlmap(home: Path):  # type: ignore[no-untyped-def]
    def run(
        argv: Sequence[str],
        *,
        stdin: str = "",
        env: Mapping[str, str] | None = None,
        api: FakeAPI | None = None,
    ) -> Result:
        out, err = io.StringIO(), io.StringIO()
        environ = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
        environ.update(env or {})
        code = main(
            list(argv),
            io.StringIO(stdin),
            out,
            err,
            environ=environ,
            connect=api.connect if api is not None else None,
        )
        return Result(code, out.getvalue(), err.getvalue())

    return run
