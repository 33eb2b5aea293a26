"""What the core (jq, engine, model) loads for a live ``get``: modules that only some commands
need stay unloaded until one of them needs it (start-up is most of what a live get costs,
docs/cli.md). Each command runs in a fresh interpreter against the fake API server, with a
cache folder of its own, as a user's second and later commands do (the definition's programs
kept between commands)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from tests.cli.http_fake import serve, write_kubeconfig
from tests.fresh import fresh_python

# the command, then the modules it loaded (read before the interpreter's end)
_RUN = """
import io, json, sys
from workload_map.cli.main import main
out = io.StringIO()
code = main(sys.argv[1:], stdout=out, stderr=io.StringIO())
print(json.dumps([code, out.getvalue(), sorted(sys.modules)]))
"""


def live_gets(tmp_path: Path, count: int) -> list[tuple[int, str, set[str]]]:
    """``wlmap get jobsets`` run ``count`` times against one fake API server and one cache
    folder: each run's exit code, output and loaded modules."""
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    runs = []
    with serve(api) as (server, _):
        kubeconfig = str(write_kubeconfig(tmp_path / "kc", server, namespace="ml"))
        args = ["get", "jobsets", "--kubeconfig", kubeconfig, "--cache-dir", str(tmp_path / "c")]
        for _ in range(count):
            done = fresh_python(_RUN, *args, home=tmp_path, check=True)
            code, output, modules = json.loads(done.stdout.splitlines()[-1])
            runs.append((code, output, set(modules)))
    return runs


def test_a_get_whose_programs_are_kept_loads_no_jq_parser(tmp_path: Path) -> None:
    """The definition's programs are rebuilt from the kept trees (jq.trees), so the parser and
    its lexer (about 58 KB of bytecode, 1.9M instructions of a live get, docs/cli.md) load only
    in the first command, which parses them."""
    first, second = live_gets(tmp_path, 2)
    parser = {"workload_map.jq.parser", "workload_map.jq.lexer"}
    assert first[0] == 0 and "train" in first[1], first[:2]
    assert parser <= first[2]
    assert second[:2] == first[:2]
    assert "workload_map.jq.trees" in second[2]
    assert not parser & second[2]


def test_the_core_and_wlmap_jq_load_no_threading(tmp_path: Path) -> None:
    """The jq engine's and the engine's locks and thread-local state are ``_thread``'s (the
    objects ``threading`` hands out), so neither imports ``threading`` (~2M instructions of
    ``wlmap jq``, docs/cli.md); a deep retry (jq.deep.run_deep) imports it for its thread."""
    data = tmp_path / "in.json"
    data.write_text('{"a": [1, {"b": 3}]}')
    code = (
        "import io, sys\n"
        "import workload_map.engine, workload_map.model\n"
        "from workload_map import jq\n"
        "from workload_map.cli.main import main\n"
        "out = io.StringIO()\n"
        f"code = main(['jq', '.a[1].b', {str(data)!r}], stdout=out)\n"
        "print(code, out.getvalue().strip(), 'threading' in sys.modules)\n"
        "deep = jq.compile('def f: if . > 0 then (. - 1 | f) + 1 else 0 end; f')\n"
        "print(deep.first(900), 'threading' in sys.modules)\n"
    )
    done = fresh_python(code, home=tmp_path)
    assert done.stdout.split() == ["0", "3", "False", "900", "True"], done.stdout + done.stderr


def test_a_get_loads_none_of_the_engines_views_of_one_workload(tmp_path: Path) -> None:
    """A get row is the workload's summary (engine.summary, with its PodCounts): describe's
    views, the resources' and the tree's (about 20 view classes and the events' with them) and
    the write-back load when a workload is viewed or written (engine.workload), not with the
    engine (about 7M instructions of a live get, docs/cli.md)."""
    ((code, output, modules),) = live_gets(tmp_path, 1)
    assert code == 0 and "train" in output, output
    assert {"workload_map.engine.workload", "workload_map.engine.summary"} <= modules
    views = ("describe", "resource_view", "tree", "events", "writeback")
    assert sorted(modules & {f"workload_map.engine.{name}" for name in views}) == []


def test_a_get_loads_no_table_of_equal_inputs(tmp_path: Path) -> None:
    """Results shared between workloads with equal inputs (engine.equal_inputs, with the read
    analysis of engine.reads) serve a watch cache's objects (the exporter, the web view, the
    operator): a command's workloads share none, so neither module loads (about 1.4M
    instructions of a live get, docs/cli.md)."""
    ((code, output, modules),) = live_gets(tmp_path, 1)
    assert code == 0 and "train" in output, output
    assert "workload_map.engine.runner" in modules
    shared = {"workload_map.engine.equal_inputs", "workload_map.engine.reads"}
    assert sorted(modules & shared) == []


def test_a_get_builds_no_phase_enum(tmp_path: Path) -> None:
    """The statuses are read as the plain strings of model.types (STATUS_ORDER and
    SEVERITY_ORDER): model.Phase, a StrEnum of nine members (~1M instructions), is built in
    model.phases when asked for (tests/model/test_phases.py pins the two equal)."""
    ((code, output, modules),) = live_gets(tmp_path, 1)
    assert code == 0 and "train" in output, output
    assert "workload_map.model.types" in modules
    assert "workload_map.model.phases" not in modules
