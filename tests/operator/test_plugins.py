"""Controller plug-ins by entry point (operator/plugins.py): a distribution on ``sys.path`` that
declares one is loaded and registered; a broken one stops the operator with an error naming it;
the installed metadata matches pyproject.toml; ``wlmap`` itself never reads entry points."""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from workload_map.operator import controllers
from workload_map.operator.main import _load_builtin_controllers, build_parser
from workload_map.operator.main import main as operator_main
from workload_map.operator.plugins import GROUP, SKIP_ENV, PluginLoadError, load_plugins

ROOT = Path(__file__).resolve().parents[2]
MODULE = "wlmap_probe_plugin"

PLUGIN_SOURCE = """
from workload_map.operator import controllers

class Probe:
    needs_leader = False

    def __init__(self, name):
        self.name = name

    def start(self, ctx):
        pass

    def stop(self):
        pass

controllers.register_flags(lambda p: p.add_argument("--enable-probe", action="store_true"))
controllers.register(
    lambda cfg: Probe("probe") if cfg.args.enable_probe else None, name="probe-by-module"
)

def register():  # the `module:function` form
    controllers.register(lambda cfg: Probe("probe-fn"), name="probe-by-function")

not_callable = 42

def explode():
    raise RuntimeError("the probe's register function failed")
"""


def distribution(root: Path, name: str, entry_points: dict[str, str]) -> None:
    """A minimal installed distribution (what pip leaves in site-packages) under ``root``."""
    info = root / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}")


@pytest.fixture
def registry() -> Iterator[None]:
    """The operator's registry as the installed plug-ins leave it, restored afterwards."""
    _load_builtin_controllers()
    factories, adders = list(controllers._factories), list(controllers._flag_adders)
    yield
    controllers._factories[:] = factories
    controllers._flag_adders[:] = adders
    sys.modules.pop(MODULE, None)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: None) -> Path:
    (tmp_path / f"{MODULE}.py").write_text(PLUGIN_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(SKIP_ENV, raising=False)
    return tmp_path


def names() -> set[str]:
    return {k for k, _ in controllers._factories}


def test_the_installed_entry_points_are_those_of_pyproject() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    installed = {
        ep.name: ep.value
        for ep in importlib.metadata.entry_points(group=GROUP)
        if ep.dist is not None and ep.dist.name == "workload-map"
    }
    assert installed == declared[GROUP], (
        "the venv's metadata is stale: run .venv/bin/pip install -e '.[dev]' --no-deps"
    )
    assert set(installed) >= {"gangs", "metrics"}


def test_the_rooms_controllers_come_from_their_entry_points(registry: None) -> None:
    loaded = _load_builtin_controllers()
    assert {"gangs", "metrics"} <= set(loaded)
    assert {"karta", "gangs-watch", "gangs", "workload-metrics"} <= names()
    args = build_parser().parse_args(["--enable-gang-scheduling", "--enable-workload-metrics"])
    assert args.enable_gang_scheduling and args.enable_workload_metrics


def test_a_distribution_on_the_path_plugs_in(site: Path) -> None:
    distribution(site, "wlmap_probe", {"probe": MODULE, "probe-fn": f"{MODULE}:register"})
    importlib.invalidate_caches()
    assert "probe-by-module" not in names()
    loaded = _load_builtin_controllers()
    assert {"probe", "probe-fn", "gangs", "metrics"} <= set(loaded)
    assert loaded == sorted(loaded)  # by entry-point name, whatever the install order
    assert {"probe-by-module", "probe-by-function"} <= names()
    args = build_parser().parse_args(["--enable-probe"])
    cfg = controllers.OperatorConfig(args, "ns", "me")
    made = [c.name for f in controllers.factories() if (c := f(cfg)) is not None]
    assert "probe" in made and "probe-fn" in made and "karta" in made
    assert _load_builtin_controllers() == loaded  # loading again registers nothing twice
    assert sum(k == "probe-by-module" for k in names()) == 1


def test_a_broken_plug_in_is_named_and_the_operator_refuses_to_start(
    site: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    distribution(
        site,
        "wlmap_broken",
        {
            "missing": "wlmap_no_such_module",
            "no-attr": f"{MODULE}:nothing_here",
            "not-callable": f"{MODULE}:not_callable",
            "raises": f"{MODULE}:explode",
            "probe": MODULE,
        },
    )
    importlib.invalidate_caches()
    with pytest.raises(PluginLoadError) as caught:
        load_plugins()
    failed = {f.name: f for f in caught.value.failures}
    assert set(failed) == {"missing", "no-attr", "not-callable", "raises"}
    assert {f.distribution for f in failed.values()} == {"wlmap_broken"}
    assert isinstance(failed["missing"].cause, ModuleNotFoundError)
    assert isinstance(failed["no-attr"].cause, AttributeError)
    assert isinstance(failed["not-callable"].cause, TypeError)
    assert "register function failed" in str(failed["raises"].cause)
    text = str(caught.value)
    assert "controller plug-in 'missing' (entry point missing = 'wlmap_no_such_module'" in text
    assert f"group {GROUP} of distribution wlmap_broken" in text
    assert f"{SKIP_ENV}=missing,no-attr,not-callable,raises" in text
    assert "probe-by-module" in names()  # the others were still tried: every failure is listed

    assert operator_main(["--version"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("wlmap operator: cannot start: controller plug-in 'missing'")
    assert "'raises'" in err

    monkeypatch.setenv(SKIP_ENV, "missing, no-attr,not-callable ,raises")
    assert operator_main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == "0.1.0"


def test_wlmap_commands_never_read_entry_points(tmp_path: Path) -> None:
    probe = textwrap.dedent(
        """
        import sys
        from workload_map.cli.main import main
        code = main(sys.argv[1:])
        print("\\nLOADED=" + str("importlib.metadata" in sys.modules), file=sys.stderr)
        """
    )
    for args in (
        ["describe", "-f", "examples/jobset/jobset.yaml", "--pods", "examples/jobset/pods.yaml"],
        ["definitions", "--group", "ray.io"],
        ["operator", "--version"],  # the control: the operator does read them
    ):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        expected = args[0] == "operator"
        assert done.stderr.rstrip().endswith(f"LOADED={expected}"), (args, done.stderr[-300:])


def test_our_plug_ins_register_nothing_at_import() -> None:
    probe = textwrap.dedent(
        """
        import workload_map.exporter.operator as metrics
        import workload_map.gangs.operator as gangs
        from workload_map.operator import controllers
        before = [k for k, _ in controllers._factories]
        gangs.register(); metrics.register(); gangs.register()
        print(before, sorted(k for k, _ in controllers._factories))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] ['gangs', 'gangs-watch', 'workload-metrics']"


def test_a_module_entry_point_has_its_register_called(site: Path) -> None:
    # what an install whose metadata predates `module:register` holds
    (site / "wlmap_lazy_plugin.py").write_text(
        "from workload_map.operator import controllers\n"
        "def register():\n"
        "    controllers.register(lambda cfg: None, name='lazy')\n"
    )
    distribution(site, "wlmap_lazy", {"lazy": "wlmap_lazy_plugin"})
    importlib.invalidate_caches()
    try:
        assert "lazy" in load_plugins() and "lazy" in names()
    finally:
        sys.modules.pop("wlmap_lazy_plugin", None)
