"""The command line's imports: which modules a command loads.

Module sets are read from ``python -X importtime -m workload_map.cli …`` (what the interpreter
itself reports, never seconds): ``wlmap --help`` and ``--version`` load the command table and
nothing of any command, and generate no class; ``wlmap get`` loads its own modules and the
cluster client, and none of another command's; ``describe -f`` no cluster code. The modules of
the CLI, the I/O layer, the services and the catalog are pinned exactly (a new module on a
command's path is a decision, measured: docs/cli.md); the core's are the engine's to choose. No import circle and imports at the top of files (but the documented start-up
boundaries, the command table's ``cli.main._load`` among them) are checked for the whole package
in ``tests/test_rooms.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from tests.cli.http_fake import serve, write_kubeconfig
from tests.fresh import fresh_python
from workload_map.cli import argparse_import

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "src" / "workload_map" / "cli"
CATALOG_FILE = ROOT / "src/workload_map/catalog/data/jobset-x-k8s-io-jobset-v1alpha2.yaml"


def importtime(args: list[str], home: Path) -> tuple[set[str], str]:
    """The modules ``python -X importtime -m workload_map.cli ARGS`` imports, and its output."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workload_map.cli", *args],
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
        check=False,
    )
    modules = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    modules.discard("imported package")  # the header line
    lines = [li for li in done.stderr.splitlines() if not li.startswith("import time:")]
    return modules, done.stdout + "\n".join(lines)


#: the catalog a command that resolves one kind loads (``definitions`` and ``--all-types`` read
#: the same modules, with more of the bundle)
CATALOG_LOOKUP = {
    "workload_map.catalog",
    "workload_map.catalog.bundle",
    "workload_map.catalog.definitions",
    "workload_map.catalog.registry",
    "workload_map.catalog.resolution",
    "workload_map.catalog.stamps",
}


#: argparse's messages need no ``gettext`` (nor the ``locale`` its lookups import) where its
#: default catalog directory does not exist (cli.argparse_import; 8M instructions, docs/cli.md)
NO_CATALOGS = () if os.path.isdir(argparse_import.LOCALEDIR) else ("gettext", "locale")


def ours(modules: set[str], prefix: str = "workload_map") -> set[str]:
    return {m for m in modules if m == prefix or m.startswith(prefix + ".")}


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize("flag", ["--help", "--version", "completion bash"])
def test_help_loads_the_command_table_and_no_command(flag: str, tmp_path: Path) -> None:
    """``completion SHELL`` too: it runs at every shell's start and prints a fixed script, so
    it runs without a context (the table's ``context=False``)."""
    modules, output = importtime(flag.split(), tmp_path)
    assert output.strip()
    if flag.startswith("completion"):
        assert "__complete" in output
        modules.discard("workload_map.cli.completion_scripts")
    assert ours(modules) == {
        "workload_map",
        "workload_map.errors",
        "workload_map.cli",
        "workload_map.cli.main",
        "workload_map.cli.argparse_import",  # argparse without gettext
        "workload_map.cli.commands",  # the command table and its parsers
        "workload_map.cli.exits",
        "workload_map.cli.style",  # colour for error lines (not cli.render's JSON and YAML)
        "workload_map.cli.suggest",
        "workload_map.kube",
        "workload_map.kube.flags",
    }
    unused = (
        "msgspec",
        "yaml",
        "json",
        "hashlib",
        "ssl",
        "socket",
        "shutil",
        "difflib",
        *NO_CATALOGS,
    )
    # no class of the table is generated at start-up (dataclasses, and the NamedTuple the
    # command rows were: they compiled code at every start, callgrind, docs/cli.md)
    generated = ("dataclasses", "inspect", "dis", "tokenize", "ast")
    assert loaded(modules, (*unused, *generated)) == []


def test_get_loads_its_modules_and_no_other_commands(tmp_path: Path) -> None:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    with serve(api) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml")
        modules, output = importtime(["get", "jobsets", "--kubeconfig", str(kubeconfig)], tmp_path)
    assert "train" in output, output
    assert ours(modules, "workload_map.cli") == {
        "workload_map.cli",
        "workload_map.cli.main",
        "workload_map.cli.argparse_import",  # argparse without gettext
        "workload_map.cli.commands",
        "workload_map.cli.exits",
        "workload_map.cli.style",
        "workload_map.cli.render",
        "workload_map.cli.suggest",
        "workload_map.cli.get_cmd",  # the table's lazy import
        "workload_map.cli.context",  # and the context it runs in
        "workload_map.cli.choices",
        "workload_map.cli.config",
        "workload_map.cli.get_rows",
        "workload_map.cli.humanize",
        "workload_map.cli.live_targets",
        "workload_map.cli.targets",
        "workload_map.cli.get_views",
        "workload_map.cli.printers",
        "workload_map.cli.workload_view",
        "workload_map.cli.manifests",
    }
    # the layers below: the connection, its services, and the catalog, nothing more
    assert ours(modules, "workload_map.kube") == {
        "workload_map.kube",
        "workload_map.kube.auth",
        "workload_map.kube.cache_dir",
        "workload_map.kube.client",
        "workload_map.kube.discovery",
        "workload_map.kube.discovery_cache",
        "workload_map.kube.errors",
        "workload_map.kube.flags",
        "workload_map.kube.kubeconfig",
        "workload_map.kube.kubeconfig_cache",
        "workload_map.kube.options",
        "workload_map.kube.pager",
        "workload_map.kube.paths",
        "workload_map.kube.senders",
        "workload_map.kube.transport",
        "workload_map.kube.urls",
        "workload_map.kube.wire",
    }
    assert ours(modules, "workload_map.cluster") == {
        "workload_map.cluster",
        "workload_map.cluster.connection",
        "workload_map.cluster.definitions",
        "workload_map.cluster.ownership",
        "workload_map.cluster.references",
    }
    assert ours(modules, "workload_map.catalog") == CATALOG_LOOKUP
    never = (
        "kubernetes",
        "urllib3",
        "difflib",
        "fractions",  # quantities are integer ratios (engine.quantities)
        "workload_map.gangs",
        "workload_map.model.findings",  # the finding codes: a definition's problems only
        "workload_map.model.validation",
        # the watch loop: get -w/--watch-only only
        "workload_map.cli.get_watch",
        "workload_map.kube.watch",
        *BOUND_UNUSED,
        *NO_CATALOGS,
    )
    assert loaded(modules, never) == []


def test_describe_file_loads_no_cluster_code(tmp_path: Path) -> None:
    job = ROOT / "examples" / "jobset" / "jobset.yaml"
    modules, output = importtime(["describe", "-f", str(job)], tmp_path)
    assert "llm-pretrain" in output, output
    assert ours(modules, "workload_map.cli") == {
        "workload_map.cli",
        "workload_map.cli.main",
        "workload_map.cli.argparse_import",  # argparse without gettext
        "workload_map.cli.commands",
        "workload_map.cli.exits",
        "workload_map.cli.style",
        "workload_map.cli.suggest",
        "workload_map.cli.describe_cmd",  # the table's lazy import (-f: the offline module)
        "workload_map.cli.context",  # and the context it runs in
        "workload_map.cli.choices",
        "workload_map.cli.config",
        "workload_map.cli.describe_events",
        "workload_map.cli.describe_view",
        "workload_map.cli.file_workload",
        "workload_map.cli.humanize",
        "workload_map.cli.manifests",
        "workload_map.cli.printers",
        "workload_map.cli.render",
        "workload_map.cli.targets",
        "workload_map.cli.workload_view",
    }
    # of the I/O layer only the flags, the options and the errors a context names (no request
    # path, no kubeconfig reader), and short names for TYPE/NAME
    assert ours(modules, "workload_map.kube") == {
        "workload_map.kube",
        "workload_map.kube.cache_dir",  # where the parsed jq programs are kept
        "workload_map.kube.errors",
        "workload_map.kube.flags",
        "workload_map.kube.options",
        "workload_map.kube.paths",
        "workload_map.kube.shortnames",
    }
    assert ours(modules, "workload_map.catalog") == CATALOG_LOOKUP
    never = ("workload_map.cluster", "workload_map.cli.describe_live")
    assert loaded(modules, (*never, "ssl", "socket", *BOUND_UNUSED)) == []


#: what dataclasses (inspect) and msgspec (its inspect, textwrap) import but no command uses
#: while it runs: stand-ins until first used (cli.main._DEFERRED), with inspect's own imports;
#: and ``platform``, which msgspec's ``uuid`` asks only for the system's name (cli.main._Platform)
BOUND_UNUSED = (
    "platform",
    "inspect",
    "ast",
    "dis",
    "tokenize",
    "msgspec.inspect",
    "textwrap",
    "ipaddress",
    "copy",
    "heapq",
)


def test_a_deferred_module_loads_on_first_use() -> None:
    """After a command, the modules it bound as stand-ins work as imported: a first attribute
    read loads the real module, which ``import`` then gives everyone."""
    job = ROOT / "examples" / "jobset" / "jobset.yaml"
    code = (
        "import io, sys\n"
        "from workload_map.cli.main import main\n"
        f"assert main(['describe', '-f', {str(job)!r}], stdout=io.StringIO()) == 0\n"
        "import dataclasses, msgspec\n"
        "assert 'inspect' not in sys.modules and 'textwrap' not in sys.modules\n"
        "assert str(dataclasses.inspect.signature(lambda a, b=1: None)) == '(a, b=1)'\n"
        "import inspect, types\n"
        "assert type(inspect) is types.ModuleType and hasattr(inspect, 'getsource')\n"
        "assert msgspec.inspect.type_info(int) == msgspec.inspect.IntType()\n"
        "from msgspec import _json_schema\n"
        "assert _json_schema.textwrap.dedent('  x') == 'x'\n"
        "import urllib.parse\n"
        "assert urllib.parse.urlsplit('https://[::1]:6443/x').hostname == '::1'\n"
        "assert type(sys.modules['ipaddress']) is types.ModuleType\n"
        "assert dataclasses.copy.deepcopy({'a': [1]}) == {'a': [1]}\n"
        "import uuid, os\n"
        "assert 'platform' not in sys.modules\n"
        "assert uuid._LINUX is (os.uname().sysname == 'Linux')\n"
        "import platform\n"
        "assert type(platform) is types.ModuleType and platform.system() == os.uname().sysname\n"
        "print('ok')\n"
    )
    done = fresh_python(code)
    assert done.stdout.strip() == "ok", done.stderr


@pytest.mark.parametrize("command", ["get", "describe", "verify", "definitions", "completion"])
def test_the_table_names_each_commands_module(command: str) -> None:
    from workload_map.cli.commands import TABLE

    module = TABLE[command].module
    assert (CLI / (module.rsplit(".", 1)[1] + ".py")).is_file()


@pytest.mark.parametrize(
    ("args", "needs_jq"),
    [
        (["crd", "show"], False),
        (["definitions"], False),
        (["completion", "bash"], False),
        (["__complete", "get", "js"], False),
        (["validate", str(CATALOG_FILE)], True),
    ],
    ids=["crd", "definitions", "completion", "complete", "validate"],
)
def test_commands_that_evaluate_no_workload_load_no_engine(
    args: list[str], needs_jq: bool, tmp_path: Path
) -> None:
    """The engine (with jq, ~150M instructions of imports) loads only where a workload is
    read through a definition; ``validate`` compiles the definition's expressions (jq) but
    evaluates none. Only the owner rule (``engine.owners``, for file readers) and the
    engine's plain-object helpers may load."""
    modules, output = importtime(args, tmp_path)
    assert output.strip()
    allowed = {
        "workload_map.engine",  # the package: its names bind on first use
        "workload_map.engine.errors",
        "workload_map.engine.objects",
        "workload_map.engine.owners",
    }
    assert ours(modules, "workload_map.engine") <= allowed
    assert bool(ours(modules, "workload_map.jq")) is needs_jq


def test_no_kubeconfig_no_yaml(tmp_path: Path) -> None:
    """PyYAML is imported to read a kubeconfig file, not to find out there is none:
    ``definitions`` on a machine without one answers from the catalog alone."""
    modules, output = importtime(["definitions"], tmp_path)
    assert "jobset" in output.lower(), output
    assert loaded(modules, ("yaml",)) == []


def test_a_kubeconfig_read_before_needs_no_yaml(tmp_path: Path) -> None:
    """The kubeconfig's parse is kept between commands (kube.kubeconfig_cache): the first
    ``get`` imports PyYAML to read it, the next ones do not (docs/cli.md)."""
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    with serve(api) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml")
        args = ["get", "jobsets", "--kubeconfig", str(kubeconfig)]
        first, output = importtime(args, tmp_path)
        assert "train" in output, output
        second, output = importtime(args, tmp_path)
    assert "train" in output, output
    assert loaded(first, ("yaml",)) == ["yaml", *sorted(m for m in first if m.startswith("yaml."))]
    assert loaded(second, ("yaml",)) == []


def test_msgspec_is_imported_without_typing_extensions_which_stays_importable() -> None:
    """A command imports msgspec with ``typing_extensions`` hidden (it only lets msgspec also
    recognise that package's TypedDicts); anything importing it later still gets it."""
    job = ROOT / "examples" / "jobset" / "jobset.yaml"
    code = (
        "import io, sys\n"
        "from workload_map.cli.main import main\n"
        f"assert main(['describe', '-f', {str(job)!r}], stdout=io.StringIO()) == 0\n"
        "assert 'msgspec' in sys.modules and 'typing_extensions' not in sys.modules\n"
        "import typing_extensions\n"
        "print(typing_extensions.__name__)\n"
    )
    done = fresh_python(code)
    assert done.stdout.strip() == "typing_extensions", done.stderr


def test_a_live_get_builds_no_forward_reference(tmp_path: Path) -> None:
    """``typing.ForwardRef`` calls the ``compile`` builtin, whose first call in a process builds
    the ``ast`` module's node types (~10M instructions of a live get, callgrind, docs/cli.md):
    a live ``get`` builds none, neither when discovery comes from the server nor from its cache
    (msgspec's probe of the keyword is answered by a stand-in, NamedTuples on the path declare
    their fields as types, the cached discovery's Structs have no string annotations)."""
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    with serve(api) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml")
        args = ["get", "jobsets", "--kubeconfig", str(kubeconfig)]
        args += ["--cache-dir", str(tmp_path / "cache")]
        code = (
            "import builtins, io, typing\n"
            "made, cls = [], typing.ForwardRef\n"
            "real = cls.__init__\n"
            "def counted(self, arg, *rest, **kw):\n"
            "    made.append(arg)\n"
            "    real(self, arg, *rest, **kw)\n"
            "typing.ForwardRef.__init__ = counted\n"
            "from workload_map.cli.main import main\n"
            "out = io.StringIO()\n"
            f"code = main({args!r}, stdout=out)\n"
            "print(code, 'train' in out.getvalue(), typing.ForwardRef is cls, made)\n"
        )
        first, second = fresh_python(code), fresh_python(code)
    assert any((tmp_path / "cache").rglob("*")), "the second command read discovery from a cache"
    # (and typing's class is the real one again once msgspec is imported)
    assert first.stdout.split() == ["0", "True", "True", "[]"], first.stdout + first.stderr
    assert second.stdout.split() == ["0", "True", "True", "[]"], second.stdout + second.stderr


def test_a_live_get_makes_no_dataclass(tmp_path: Path) -> None:
    """``@dataclass`` generates and compiles its methods when the class is made (about 5M
    instructions for the engine's Structure, docs/cli.md): a live ``get`` makes none."""
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    with serve(api) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml")
        args = ["get", "jobsets", "--kubeconfig", str(kubeconfig)]
        code = (
            "import dataclasses, io\n"
            "made, real = [], dataclasses._process_class\n"
            "def counted(cls, *rest, **kw):\n"
            "    made.append(cls.__qualname__)\n"
            "    return real(cls, *rest, **kw)\n"
            "dataclasses._process_class = counted\n"
            "from workload_map.cli.main import main\n"
            "out = io.StringIO()\n"
            f"code = main({args!r}, stdout=out)\n"
            "print(code, 'train' in out.getvalue(), made)\n"
        )
        done = fresh_python(code)
    assert done.stdout.split() == ["0", "True", "[]"], done.stdout + done.stderr
