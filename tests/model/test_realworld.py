"""Every upstream definition under ../shared/realworld/karta-upstream, with the reference verdict.

All parse and validate except ``mpijob.yaml``, which upstream published with a missing newline
(it is not YAML); the two CRDs there are not definitions at all. The only findings on the valid
ones are warnings (advice), never errors.
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import pytest
import yaml

from workload_map.model import KartaLoadError, check_against_crd, dump_karta, load_karta, validate

pytestmark = pytest.mark.shared

NOT_DEFINITIONS = {
    "customjobs_crd.yaml",
    "optimization.nvidia.com_resourceinterfaces.yaml",
}
UNPARSEABLE = {"mpijob.yaml"}


def _definitions(shared: Path) -> list[Path]:
    root = shared / "realworld" / "karta-upstream"
    return sorted(p for p in root.rglob("*.yaml") if p.name not in NOT_DEFINITIONS)


def test_upstream_definitions_have_the_reference_verdict(shared_dir: Path) -> None:
    files = _definitions(shared_dir)
    assert len(files) >= 19
    loaded = 0
    for path in files:
        if path.name in UNPARSEABLE:
            with pytest.raises(KartaLoadError, match=r"not valid YAML or JSON: line 25"):
                load_karta(path)
            continue
        legacy = "ResourceInterface" in path.read_text()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            karta = load_karta(path)
        assert any(issubclass(w.category, DeprecationWarning) for w in caught) == legacy, path
        findings = validate(karta)
        assert [f for f in findings if f.is_error] == [], (path.name, findings)
        loaded += 1
    assert loaded == len(files) - len(UNPARSEABLE)


def test_upstream_karta_round_trip(shared_dir: Path) -> None:
    for path in _definitions(shared_dir):
        if path.name in UNPARSEABLE or "ResourceInterface" in path.read_text():
            continue
        karta = load_karta(path)
        assert load_karta(dump_karta(karta)) == karta, path.name


def test_kai_example_matches_its_crd(shared_dir: Path) -> None:
    root = shared_dir / "realworld" / "karta-upstream" / "kai-scheduler-e2e"
    karta = load_karta(root / "customjob_karta.yaml")
    crd = yaml.safe_load((root / "customjobs_crd.yaml").read_text())
    assert check_against_crd(karta, crd) == []
    gang = karta.gang_scheduling
    assert gang is not None and gang.pod_group is not None
    assert [s.component_name for s in gang.pod_group.sub_groups] == ["coordinator", "worker"]


def test_upstream_jobset_example_against_jobset_crd(shared_dir: Path) -> None:
    crd_path = shared_dir / "realworld" / "jobset" / "jobset.x-k8s.io_jobsets.yaml.gz"
    crd = yaml.safe_load(gzip.decompress(crd_path.read_bytes()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        karta = load_karta(
            shared_dir / "realworld/karta-upstream/run-ai-karta-examples/jobset.yaml"
        )
    assert check_against_crd(karta, crd) == []
