"""Quantities and the scheduler's effective-request rule."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from workload_map.engine import resources as res
from workload_map.engine.errors import EngineError
from workload_map.engine.quantities import (
    format_bytes,
    format_millis,
    parse_quantity,
    to_millis,
    to_units,
)


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("500m", 500),
        ("2", 2000),
        ("0.1", 100),
        ("1.5", 1500),
        (2, 2000),
        ("1e3", 1_000_000),
        ("100u", 1),
        ("1n", 1),
        (".5", 500),
        ("+1", 1000),
    ],
)
def test_cpu_to_millicores_rounds_up(text: object, millis: int) -> None:
    assert to_millis(text) == millis


@pytest.mark.parametrize(
    ("text", "units"),
    [
        ("1Gi", 2**30),
        ("512Mi", 512 * 2**20),
        ("1G", 10**9),
        ("1.5Gi", 3 * 2**29),
        ("129M", 129 * 10**6),
        ("8", 8),
        ("1k", 1000),
        ("1Ki", 1024),
        ("100m", 1),
        ("2E", 2 * 10**18),
        ("1Ei", 2**60),
    ],
)
def test_units_round_up(text: str, units: int) -> None:
    assert to_units(text) == units


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "1Z", "--1", True, None, [1], float("nan")])
def test_invalid_quantities_are_clear_errors(bad: object) -> None:
    with pytest.raises(EngineError, match="quantity"):
        parse_quantity(bad)


@pytest.mark.parametrize(
    ("text", "exact"),
    [
        ("1.5Gi", Fraction(3 * 2**29)),
        ("-1.5", Fraction(-3, 2)),
        ("1e-3", Fraction(1, 1000)),
        ("2.5e2", Fraction(250)),
        ("1.", Fraction(1)),
        ("7n", Fraction(7, 10**9)),
        ("0.001m", Fraction(1, 10**6)),
        (12, Fraction(12)),
        (0.25, Fraction(1, 4)),
    ],
)
def test_parse_quantity_is_exact(text: object, exact: Fraction) -> None:
    value = parse_quantity(text)
    assert type(value) is Fraction
    assert value == exact


@pytest.mark.parametrize(
    ("text", "millis", "units"),
    [("-1.5", -1500, -1), ("-0.0001", 0, 0), ("-1m", -1, 0), ("0.0001", 1, 1), (-2, -2000, -2)],
)
def test_negative_and_tiny_quantities_round_up_as_the_api_server(
    text: object, millis: int, units: int
) -> None:
    assert (to_millis(text), to_units(text)) == (millis, units)


def test_summing_requests_does_not_import_fractions() -> None:
    """Text and integer quantities are read as integer ratios: ``fractions`` is loaded only for
    :func:`parse_quantity` itself or a float (its import is ~4M instructions of a live ``get``,
    callgrind, docs/cli.md)."""
    code = (
        "import sys\n"
        "from workload_map.engine import resources, quantities as q\n"
        "spec = {'containers': [{'name': 'a', 'resources': {'requests': "
        "{'cpu': '1.5', 'memory': '8Gi', 'nvidia.com/gpu': 2}}}]}\n"
        "print(dict(resources.pod_request(spec)), q.to_millis('250m'), q.to_units(3), "
        "'fractions' in sys.modules)\n"
        "q.parse_quantity('1')\n"
        "print('fractions' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).parents[2] / "src")},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.endswith("250 3 False"), first
    assert "'cpu': 1500" in first, first
    assert second == "True"


def test_formatting() -> None:
    assert format_millis(2000) == "2"
    assert format_millis(2500) == "2500m"
    assert format_bytes(0) == "0"
    assert format_bytes(4 * 2**30) == "4Gi"
    assert format_bytes(1500 * 10**6) == "1500M"
    assert format_bytes(1001) == "1001"


def _c(
    name: str, requests: dict | None = None, limits: dict | None = None, **extra: object
) -> dict:
    resources: dict = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": name, "resources": resources, **extra}


def test_requests_else_limits_per_resource() -> None:
    spec = {"containers": [_c("a", requests={"cpu": "1"}, limits={"cpu": "2", "memory": "1Gi"})]}
    assert res.pod_request(spec) == {"cpu": 1000, "memory": 2**30}


def test_containers_sum() -> None:
    spec = {"containers": [_c("a", requests={"cpu": "1"}), _c("b", requests={"cpu": "500m"})]}
    assert res.pod_request(spec) == {"cpu": 1500}


def test_largest_init_container_wins_over_the_sum() -> None:
    spec = {
        "initContainers": [
            _c("i1", requests={"cpu": "3", "memory": "1Gi"}),
            _c("i2", requests={"cpu": "1"}),
        ],
        "containers": [_c("a", requests={"cpu": "1", "memory": "2Gi"})],
    }
    assert res.pod_request(spec) == {"cpu": 3000, "memory": 2 * 2**30}


def test_restartable_sidecars_add_to_containers_and_to_later_init_containers() -> None:
    spec = {
        "initContainers": [
            _c("side", requests={"cpu": "1"}, restartPolicy="Always"),
            _c("init", requests={"cpu": "2"}),
        ],
        "containers": [_c("a", requests={"cpu": "1"})],
    }
    # regular: 1 + sidecar 1 = 2; init after the sidecar: 2 + 1 = 3 -> 3
    assert res.pod_request(spec) == {"cpu": 3000}


def test_init_container_before_a_sidecar_does_not_count_it() -> None:
    spec = {
        "initContainers": [
            _c("init", requests={"cpu": "2"}),
            _c("side", requests={"cpu": "1"}, restartPolicy="Always"),
        ],
        "containers": [_c("a", requests={"cpu": "500m"})],
    }
    assert res.pod_request(spec) == {"cpu": 2000}


def test_pod_level_resources_override_cpu_and_memory_only() -> None:
    spec = {
        "resources": {"requests": {"cpu": "4"}, "limits": {"memory": "8Gi"}},
        "containers": [_c("a", requests={"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 2})],
    }
    assert res.pod_request(spec) == {"cpu": 4000, "memory": 8 * 2**30, "nvidia.com/gpu": 2}


def test_overhead_is_added_and_claims_counted() -> None:
    spec = {
        "overhead": {"cpu": "250m", "memory": "120Mi"},
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
        "containers": [_c("a", requests={"cpu": "1"})],
    }
    assert res.pod_request(spec) == {"cpu": 1250, "memory": 120 * 2**20, res.CLAIMS: 1}


def test_fragment_request_falls_back_to_resources() -> None:
    assert res.fragment_request({"resources": {"limits": {"nvidia.com/gpu": 1}}}) == {
        "nvidia.com/gpu": 1
    }
    frag = {
        "containers": [_c("a", requests={"cpu": "1"})],
        "container": _c("b", requests={"cpu": "1"}),
        "resources": {"requests": {"cpu": "9"}},
    }
    assert res.fragment_request(frag) == {"cpu": 2000}


def test_summary_reports_every_gpu_vendor() -> None:
    summary = res.summarize(
        {"nvidia.com/gpu": 8, "amd.com/gpu": 2, "cpu": 500, "memory": 10, "example.com/fpga": 1}
    )
    assert summary["gpus"] == 8
    assert summary["gpusAnyVendor"] == 10
    assert summary["byResource"] == {"amd.com/gpu": 2, "example.com/fpga": 1, "nvidia.com/gpu": 8}
    assert summary["cpuMillis"] == 500 and summary["memoryBytes"] == 10


def test_bad_quantity_names_the_resource() -> None:
    with pytest.raises(EngineError, match="'cpu'"):
        res.pod_request({"containers": [_c("a", requests={"cpu": "lots"})]})


def test_non_object_specs_request_nothing() -> None:
    assert res.pod_request(None) == {}
    assert res.pod_request({"containers": "x"}) == {}
