"""The web view over files reads a definition's references from the files' other objects and
from ``--ref`` files: a TrainJob's page and row show its runtime's pods and GPUs, a missing
runtime is a finding on the page (and a mark in the list), the workload still shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cluster.test_inventory_references import runtime, trainjob
from tests.web.conftest import Http, make_http
from workload_map.web import FileSource
from workload_map.web.main import main as serve_main

PAGE = "/workloads/trainer.kubeflow.org/v1alpha1/TrainJob/ml/"


@pytest.fixture
def http(tmp_path: Path) -> Iterator[Http]:
    folder = tmp_path / "jobs"
    folder.mkdir()
    (folder / "jobs.yaml").write_text(
        yaml.safe_dump_all([trainjob("a", "torch"), trainjob("c", "gone")])
    )
    ref = tmp_path / "runtime.yaml"
    ref.write_text(yaml.safe_dump(runtime("torch", 3, 2)))
    source = FileSource(folder, poll_seconds=0, refs=[ref])
    yield from make_http(source)
    source.close()


def test_the_list_shows_the_runtimes_numbers_and_marks_a_missing_runtime(http: Http) -> None:
    status, _, body = http.get("/")
    assert status == 200
    row_a = body[body.index(">a</a>") :].split("</tr>")[0]
    assert "0/3" in row_a and "6 · 0 · 0" in row_a
    row_c = body[body.index(">c</a>") :].split("</tr>")[0]
    assert "⚠" in row_c and "ClusterTrainingRuntime/gone" in row_c
    assert ">torch</a>" not in body  # a --ref object is read, never listed as a workload


def test_the_workload_page_lists_its_references(http: Http) -> None:
    status, _, body = http.get(PAGE + "a")
    assert status == 200
    section = body[body.index('id="references"') :].split("</section>")[0]
    assert "$runtime" in section and "ClusterTrainingRuntime/torch" in section
    assert 'role="alert"' not in section
    gangs = body[body.index('id="gangs"') :].split("</section>")[0]
    assert "pg-tj-a-trainjob" in gangs and '<td class="num">3</td>' in gangs  # every node


def test_a_missing_runtime_is_a_finding_on_the_page(http: Http) -> None:
    status, _, body = http.get(PAGE + "c")
    assert status == 200
    section = body[body.index('id="references"') :].split("</section>")[0]
    assert (
        '<p class="error" role="alert">reference &#39;runtime&#39;: '
        "ClusterTrainingRuntime/gone in namespace ml not found; the numbers above are what the "
        "TrainJob alone says</p>"
    ) in section
    assert "missing" in section


def test_a_workload_without_references_has_no_references_section(
    examples_source: FileSource,
) -> None:
    # the other kinds' pages are as before (the browser tests' screenshots hold)
    for http in make_http(examples_source):
        status, _, body = http.get(
            "/workloads/jobset.x-k8s.io/v1alpha2/JobSet/ml-team/llm-pretrain"
        )
        assert status == 200 and 'id="references"' not in body


def test_serve_ref_needs_files(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        serve_main(["--ref", "runtime.yaml"])
    assert exc.value.code == 2
    assert "--ref gives the objects of -f files' references" in capsys.readouterr().err
