"""kubectl's JSONPath dialect, checked against kubectl's own output.

Every case runs through ``kubectl label --local -f OBJ zz=1 --overwrite -o jsonpath=T`` (offline:
no API server needed; the objects already carry the ``zz=1`` label so the object is unchanged).
The answers are recorded in golden/jsonpath/kubectl.json (``--update-golden`` re-records them
with the kubectl found: $WLMAP_KUBECTL, ~/.cache/workload-map/bin/kubectl, or PATH); when a
kubectl is present the test also compares with it live, so a kubectl upgrade that changes the
dialect shows up as a failure, not as stale goldens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from workload_map.cli.jsonpath import (
    JsonPathError,
    compile_template,
    go_json,
    go_sprint,
    go_text,
    relaxed_expression,
)

HERE = Path(__file__).resolve().parent / "golden" / "jsonpath"
OBJECTS: dict[str, Any] = json.loads((HERE / "objects.json").read_text())
GOLDEN = HERE / "kubectl.json"

CASES: list[tuple[str, str]] = [
    ("configmap", "{.metadata.name}"),
    ("configmap", "{.metadata.labels}"),
    ("configmap", "{.metadata.labels.app\\.kubernetes\\.io/name}"),
    ("configmap", "{.metadata.labels['zz']}"),
    ("configmap", "{.data.n}"),
    ("configmap", "{.data.f} {.data.g} {.data.h} {.data.i} {.data.j} {.data.k} {.data.l}"),
    ("configmap", "{.data.m2}|{.data.b}|{.data.s}|{.data.e}|{.data.m}"),
    ("configmap", "{.data.nest}"),
    ("configmap", "{.data.nest.x[*]}"),
    ("configmap", "{.data.missing}|{.data.n.x}|{.data.list.k}|{.data.list[*].k.x}"),
    ("configmap", "A{range .data.items[*]}x{end}B"),
    ("configmap", '{range .data.list[*]}{.k}{"\\n"}{end}T'),
    ("configmap", "{range .data.list[*]}[{range .data.list[*]}{.k}{end}]{end}Z"),
    ("configmap", "{range .data.list[*]}{.k}:{range .data.items[*]}y{end};{end}E"),
    ("configmap", "{range .data.list[*]}{.k}"),
    ("configmap", "{range .data.list[*]}{.k}{end}{end}"),
    ("configmap", "{end}"),
    ("configmap", "{foo}"),
    ("configmap", "{.data.list[?(@.v)].k}"),
    ("configmap", "{.data.list[?(@.v>=2)].k}"),
    ("configmap", "{.data.list[?(@.v>1.5)].k}"),
    ("configmap", '{.data.list[?(@.k=="b")].v}'),
    ("configmap", "{.data.list[?(@.k=='b')].v}"),
    ("configmap", '{.data.list[?(@.k<"b")].v}'),
    ("configmap", '{.data.list[?(@.k!="b")].k}'),
    ("configmap", "{.data.list[?(@.v != 2)].k}"),
    ("configmap", '{.data.list[?( @.k == "a" )].v}'),
    ("configmap", "{.data.list[?(@.t==true)].k}"),
    ("configmap", "{.data.list[?(@.t<true)].k}"),
    ("configmap", '{.data.list[?(@.v<"a")]}'),
    ("configmap", "{.data.list[?(@.v==1)]}"),
    ("configmap", "{.data.list[*].v}"),
    ("configmap", "{.data.list[1:].k}"),
    ("configmap", "{.data.list[:2].k}"),
    ("configmap", "{.data.list[0:3:2].k}"),
    ("configmap", "{.data.list[-1].k}"),
    ("configmap", "{.data.list[-2:].k}"),
    ("configmap", "{.data.list[3]}"),
    ("configmap", "{.data.list[2:1]}"),
    ("configmap", "{.data.list[1:1]}|"),
    ("configmap", "{.data.list[0:2:0]}"),
    ("configmap", "{.data.s.*}"),
    ("configmap", "{.metadata.name[0]}"),
    ("configmap", "{.data..x}"),
    ("configmap", "{..k}"),
    ("configmap", "{.data.list[0,2].k}"),
    ("configmap", "{.data.list[*]['k']}"),
    ("configmap", '{.data["nest"]}'),
    ("configmap", "{ .metadata.name }"),
    ("configmap", "{$.kind}{@.metadata.name}"),
    ("configmap", '{.data.f}{1}{"x"}{2.5}{true}'),
    ("configmap", "{.data.list[*] .k}"),
    ("configmap", "{.data[*]}"),
    ("configmap", "{.kind"),
    ("configmap", "{.data.list[0}"),
    ("configmap", "{.data.list[a]}"),
    ("configmap", "plain text, no action"),
    ("configmap", "{.metadata.labels.zz}{'\\t'}{.metadata.labels.nothere}|"),
    ("configmap", "{$}"),
    ("jobset", "{.spec.replicatedJobs[*].name}"),
    ("jobset", "{.spec.replicatedJobs[*].replicas}"),
    (
        "jobset",
        '{range .spec.replicatedJobs[*]}{.name}{"\\t"}{.replicas}{"\\t"}'
        '{.template.spec.template.spec.containers[*].image}{"\\n"}{end}',
    ),
    ("jobset", "{.status.conditions[?(@.type=='Completed')].status}"),
    ("jobset", '{.status.replicatedJobsStatus[?(@.name=="workers")].ready}'),
    ("jobset", "{..image}"),
    ("jobset", "{..limits}"),
    ("jobset", "{.spec.replicatedJobs[1].template.spec.template.spec.containers[0].resources}"),
    ("jobset", "{.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied}"),
    ("jobset", "{.spec.replicatedJobs[?(@.replicas > 1)].name}"),
    ("jobset", "{.spec.replicatedJobs[-1:].name}"),
]


def _kubectl() -> str | None:
    for candidate in (
        os.environ.get("WLMAP_KUBECTL"),
        str(
            Path(os.environ.get("WLMAP_CACHE") or Path.home() / ".cache" / "workload-map")
            / "bin"
            / "kubectl"
        ),
        shutil.which("kubectl"),
    ):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _run_kubectl(kubectl: str, obj: dict[str, Any], template: str, tmp: Path) -> dict[str, Any]:
    path = tmp / "obj.json"
    path.write_text(json.dumps(obj))
    proc = subprocess.run(
        [
            kubectl,
            "label",
            "--local",
            "-f",
            str(path),
            "zz=1",
            "--overwrite",
            "-o",
            f"jsonpath={template}",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "KUBECONFIG": "/dev/null"},
    )
    return {"ok": proc.returncode == 0, "out": proc.stdout if proc.returncode == 0 else ""}


def _key(name: str, template: str) -> str:
    return f"{name} {template}"


@pytest.fixture(scope="module")
def golden(update_golden: bool, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    kubectl = _kubectl()
    if update_golden:
        if kubectl is None:
            pytest.fail("--update-golden needs kubectl (set WLMAP_KUBECTL)")
        tmp = tmp_path_factory.mktemp("kubectl")
        version = subprocess.run(
            [kubectl, "version", "--client", "-o", "json"], capture_output=True, text=True
        ).stdout
        answers = {_key(n, t): _run_kubectl(kubectl, OBJECTS[n], t, tmp) for n, t in CASES}
        doc = {
            "kubectl": json.loads(version or "{}").get("clientVersion", {}).get("gitVersion"),
            "answers": answers,
        }
        GOLDEN.write_text(json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return dict(json.loads(GOLDEN.read_text())["answers"])


def _ours(name: str, template: str) -> dict[str, Any]:
    try:
        return {"ok": True, "out": compile_template(template).render(OBJECTS[name])}
    except JsonPathError:
        return {"ok": False, "out": ""}


@pytest.mark.parametrize(("name", "template"), CASES)
def test_matches_recorded_kubectl(golden: dict[str, Any], name: str, template: str) -> None:
    assert _ours(name, template) == golden[_key(name, template)]


def test_matches_live_kubectl(golden: dict[str, Any], tmp_path: Path) -> None:
    """With a kubectl on this machine, the recorded answers are still kubectl's."""
    kubectl = _kubectl()
    if kubectl is None:
        pytest.skip("no kubectl binary here; the recorded answers were checked instead")
    stale = [
        (n, t)
        for n, t in CASES
        if _run_kubectl(kubectl, OBJECTS[n], t, tmp_path) != golden[_key(n, t)]
    ]
    assert not stale, (
        f"kubectl answers differ from golden (re-record with --update-golden): {stale}"
    )


def test_every_case_recorded(golden: dict[str, Any]) -> None:
    assert sorted(golden) == sorted(_key(n, t) for n, t in CASES)


def test_errors_name_the_template() -> None:
    with pytest.raises(JsonPathError, match=r"error parsing jsonpath \{\.kind, unclosed action"):
        compile_template("{.kind")
    with pytest.raises(JsonPathError, match="array index out of bounds: index 3, length 3"):
        compile_template("{.data.list[3]}").render(OBJECTS["configmap"])
    with pytest.raises(JsonPathError, match="kind is not found"):
        compile_template("{.kind}", allow_missing=False).render({})


def test_relaxed_expression_and_printing() -> None:
    assert relaxed_expression(".metadata.name") == "{.metadata.name}"
    assert relaxed_expression("metadata.name") == "{.metadata.name}"
    assert relaxed_expression("{.metadata.name}") == "{.metadata.name}"
    assert relaxed_expression("{metadata.name}") == "{.metadata.name}"
    with pytest.raises(JsonPathError):
        relaxed_expression("{a}{b}")
    assert go_json({"b": [1.0, None], "a": "<"}) == '{"a":"\\u003c","b":[1,null]}'
    # custom-columns cells are fmt.Sprint'ed (checked against kubectl in tests/integration)
    assert go_sprint({"b": [1.5, None], "a": {}}) == "map[a:map[] b:[1.5 <nil>]]"
    assert [go_text(v) for v in (1e6, 123456.0, 1e-5, 0.0001, -2.5, True)] == [
        "1e+06",
        "123456",
        "1e-05",
        "0.0001",
        "-2.5",
        "true",
    ]
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(JsonPathError, match="nested too deep"):
        compile_template("{..x}").render(deep)
