"""Start-up structure of ``wlmap``: each command imports and builds only what it uses.

Start-up cost is imports and set-up (benchmarks/live_bench.py measures it); these tests pin the
structure that keeps it low, so a regression fails here rather than only in a benchmark: a
command never imports the modules of another command's needs (the validator, JSONPath, the
cluster client offline, difflib without a typo), only the named command's parser is built
(with the same help), and the catalog's definitions are not validated again per command.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj, owner_ref, pod
from tests.cli.http_fake import serve, write_kubeconfig
from tests.fresh import fresh_python
from workload_map.cli.commands import COMMANDS, LISTING, build_parser, help_width
from workload_map.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "examples" / "jobset" / "jobset.yaml"
PODS = ROOT / "examples" / "jobset" / "pods.yaml"

_PROBE = """
import sys
from workload_map.cli.main import main
code = main(sys.argv[1:])
print("\\nMODULES=" + ",".join(sorted(sys.modules)), file=sys.stderr)
"""

# what no get/describe needs at all (the official client stays off every CLI path; the
# validator, the CRD schema checks and JSONPath templates only where a command asks for them)
_NEVER = (
    "kubernetes",
    "urllib3",
    "workload_map.model.validation",
    "workload_map.model.schema_check",
    "workload_map.cli.jsonpath",
    "difflib",
)
# and what an offline command never needs: the cluster connection, and the services over it
# (an offline definition is resolved by the core: workload_map.catalog.resolution)
_OFFLINE_NEVER = (
    "workload_map.cluster",
    "workload_map.kube.kubeconfig",
    "workload_map.kube.transport",
    "workload_map.kube.wire",
    "ssl",
    "socket",
    "shutil",  # argparse's help width, computed without it (cli.commands.help_width)
)
# and what a live get or describe needs only to watch (get -w): the watch loop and its queue
_WATCH_ONLY = (
    "workload_map.cli.get_watch",
    "workload_map.kube.watch",
    "queue",
)


def _modules(args: list[str], tmp_path: Path) -> tuple[set[str], str]:
    done = fresh_python(_PROBE, *args, home=tmp_path)
    head, _, listed = done.stderr.rpartition("MODULES=")
    return set(listed.strip().split(",")), done.stdout + head


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize(
    "args",
    [
        ["describe", "-f", str(JOB)],
        ["describe", "-f", str(JOB), "--pods", str(PODS), "-o", "json"],
    ],
    ids=["describe-f", "describe-f-pods-json"],
)
def test_offline_describe_imports_neither_cluster_nor_validator(
    args: list[str], tmp_path: Path
) -> None:
    modules, output = _modules(args, tmp_path)
    assert "llm-pretrain" in output, output  # the command did run
    assert "workload_map.engine" in modules
    assert _loaded(modules, _NEVER + _OFFLINE_NEVER + _WATCH_ONLY) == []


def test_live_get_and_describe_import_only_their_path(tmp_path: Path) -> None:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    with serve(api) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml")
        for args in (["get", "jobsets"], ["describe", "jobset/train"]):
            modules, output = _modules([*args, "--kubeconfig", str(kubeconfig)], tmp_path)
            assert "train" in output, output
            assert "workload_map.kube.transport" in modules
            assert _loaded(modules, _NEVER + _WATCH_ONLY) == [], args
        # a typo still gets its suggestion (difflib, imported for the miss only)
        modules, output = _modules(["get", "jobsett", "--kubeconfig", str(kubeconfig)], tmp_path)
        assert 'did you mean "jobset"' in output, output
        assert "difflib" in modules


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "jq"])
def test_the_parser_of_one_command_helps_as_the_whole_tree(command: str) -> None:
    whole, alone = io.StringIO(), io.StringIO()
    for out, only in ((whole, None), (alone, command)):
        parser = build_parser(out, "wlmap", only)
        with pytest.raises(Exception) as done:  # --help ends parsing with ParserExit(0)
            parser.parse_args([command, "--help"])
        assert getattr(done.value, "status", None) == 0
    assert alone.getvalue() == whole.getvalue()
    assert f"usage: wlmap {command}" in alone.getvalue()


def test_the_command_list_helps_as_the_whole_tree() -> None:
    """``wlmap --help`` and ``--version`` name no command: their parser lists the commands
    without building one argument of theirs (the whole tree's actions, connection flags
    included, were a quarter of their start-up), and says the same."""
    whole, listed = io.StringIO(), io.StringIO()
    parsers = []
    for out, only in ((whole, None), (listed, LISTING)):
        parser = build_parser(out, "wlmap", only)
        parsers.append(parser)
        with pytest.raises(Exception) as done:
            parser.parse_args(["--help"])
        assert getattr(done.value, "status", None) == 0
    assert listed.getvalue() == whole.getvalue()
    assert "usage: wlmap" in listed.getvalue()
    (commands,) = [a for a in parsers[1]._actions if isinstance(a, argparse._SubParsersAction)]
    assert commands.choices and all(not p._actions for p in commands.choices.values())
    out = io.StringIO()
    assert main(["--version"], io.StringIO(), out, io.StringIO()) == 0
    assert out.getvalue().strip()


def test_catalog_definitions_are_not_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from workload_map.model import validation

    calls: list[str] = []
    real = validation.validate

    def counting(karta: object, *args: object, **kwargs: object) -> object:
        calls.append(str(getattr(karta, "name", "")))
        return real(karta, *args, **kwargs)  # type: ignore[arg-type]

    import workload_map.model

    # the package binds the name on first use (PEP 562), from the submodule as it is then:
    # patched first, so that the value monkeypatch saves (and restores) is the real function;
    # the other way round the first look bound `counting` and the undo put it back for good
    monkeypatch.setattr(workload_map.model, "validate", counting)
    monkeypatch.setattr(validation, "validate", counting)
    out, err = io.StringIO(), io.StringIO()
    assert main(["describe", "-f", str(JOB)], stdout=out, stderr=err) == 0, err.getvalue()
    assert "llm-pretrain" in out.getvalue()
    assert calls == []  # the catalog's JobSet definition: validated by tests/catalog
    # a definition from a file is still validated before it is used
    karta = ROOT / "src/workload_map/catalog/data/jobset-x-k8s-io-jobset-v1alpha2.yaml"
    args = ["describe", "-f", str(JOB), "--definition", str(karta)]
    assert main(args, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    assert calls == ["jobset-x-k8s-io-jobset-v1alpha2"]


def _jobsets_with_pods(count: int) -> FakeAPI:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    for i in range(count):
        js = obj("jobset.x-k8s.io/v1alpha2", "JobSet", f"train-{i}", "ml", spec={})
        job = obj("batch/v1", "Job", f"train-{i}-workers-0", "ml", owner=owner_ref(js))
        api.add(js, job, pod(f"train-{i}-workers-0-0", job, namespace="ml"))
    return api


@pytest.mark.parametrize(
    "args", [["get", "jobsets"], ["describe", "jobsets"], ["get", "--all-types"]]
)
def test_listed_workloads_are_not_fetched_again_for_owner_chains(args: list[str]) -> None:
    api = _jobsets_with_pods(3)
    out, err = io.StringIO(), io.StringIO()
    assert main([*args, "-n", "ml"], stdout=out, stderr=err, connect=api.connect) == 0, err
    assert all(f"train-{i}" in out.getvalue() for i in range(3)), out.getvalue()
    # pod -> Job -> JobSet: the JobSets came with the list; only owners not listed are read
    assert [p for p in api.requests if "/jobsets/" in p] == [], api.requests


@pytest.mark.parametrize("columns", [None, "57", "0", "junk"])
def test_help_width_is_argparses_own(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert help_width() == shutil.get_terminal_size().columns - 2
    if columns == "57":
        assert help_width() == 55
