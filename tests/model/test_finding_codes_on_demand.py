"""``FindingCode`` (a ``StrEnum`` of 62 members, ~6M instructions to build: docs/cli.md) is
built when a problem is reported, not when a definition that loads cleanly is read: the
loader, the reference, label and gang-extension modules import ``model.findings`` only at
their reports."""

from __future__ import annotations

from pathlib import Path

from tests.fresh import fresh_python
from workload_map.model import FindingCode
from workload_map.model.load import LoadProblem

ROOT = Path(__file__).resolve().parents[2]
JOBSET = ROOT / "src/workload_map/catalog/data/jobset-x-k8s-io-jobset-v1alpha2.yaml"


def _fresh(code: str) -> list[str]:
    done = fresh_python(code)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_clean_definition_loads_without_the_finding_codes() -> None:
    code = (
        "import sys\n"
        "from workload_map.model import load_karta\n"
        "from workload_map.model.extensions import gang_extensions\n"
        "from workload_map.model.references import reference_names\n"
        "from workload_map.model.labels import label_key_errors\n"
        f"karta = load_karta({str(JOBSET)!r})\n"
        "gang_extensions(karta); reference_names(karta)\n"
        "print(karta.name is not None, 'workload_map.model.findings' in sys.modules)\n"
    )
    assert _fresh(code) == ["True", "False"]


def test_a_problem_still_reports_its_code_as_the_enum_member() -> None:
    code = (
        "import sys\n"
        "from workload_map.model import load_karta, KartaLoadError\n"
        "try:\n"
        "    load_karta({'apiVersion': 'run.ai/v1alpha1', 'kind': 'Karta', 'metadata': 3,\n"
        "                'spec': {'structureDefinition': {'rootComponent': {'name': 'r'}}},\n"
        "                'oops': 1})\n"
        "except KartaLoadError as exc:\n"
        "    from workload_map.model import FindingCode\n"
        "    print(*(p.code is FindingCode(p.code.value) for p in exc.problems))\n"
        "    print(*(p.code.name for p in exc.problems))\n"
    )
    assert _fresh(code) == ["True", "True", "UNKNOWN_FIELD", "WRONG_TYPE"]


def test_a_load_problem_defaults_to_the_schema_code() -> None:
    problem = LoadProblem("spec", "cannot build")
    assert problem.code is FindingCode.SCHEMA
    assert problem == LoadProblem("spec", "cannot build", FindingCode.SCHEMA)
    assert repr(problem) == (
        "LoadProblem(path='spec', message='cannot build', code=<FindingCode.SCHEMA: 'schema'>)"
    )
