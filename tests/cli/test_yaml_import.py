"""PyYAML imported through ``workload_map.yaml_import``: its pure reader's NON_PRINTABLE
pattern (57 million instructions to compile, an eighth of ``describe -f``) is compiled on first
use only, and the pure loaders still behave exactly as PyYAML's own."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import yaml

from workload_map.yaml_import import _NON_PRINTABLE

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "workload_map"
JOB = ROOT / "examples" / "jobset" / "jobset.yaml"


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_deferred_pattern_is_pyyamls_own() -> None:
    # a PyYAML release that changes the pattern must fail here (the stand-in would go unused)
    tree = ast.parse(Path(yaml.reader.__file__).read_text(encoding="utf-8"))
    found = [
        node.value.args[0].value
        for cls in tree.body
        if isinstance(cls, ast.ClassDef) and cls.name == "Reader"
        for node in cls.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["NON_PRINTABLE"]
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.args[0], ast.Constant)
    ]
    assert found == [_NON_PRINTABLE]


def test_describe_f_never_compiles_the_pattern() -> None:
    out = _run(
        "import re, sys\n"
        "from workload_map.cli.main import main\n"
        f"code = main(['describe', '-f', {str(JOB)!r}])\n"
        "import yaml.reader\n"
        "kept = yaml.reader.Reader.__dict__['NON_PRINTABLE']\n"
        "stale = [v for v in re._cache.values() if type(v).__module__ != 're']\n"
        "print(code, type(kept).__name__, stale)\n"
    )
    assert out.splitlines()[-1] == "0 _DeferredPattern []"
    assert "llm-pretrain" in out


def test_the_pure_loader_still_rejects_and_accepts_as_pyyaml() -> None:
    out = _run(
        "import re\n"
        "from workload_map.yaml_import import import_yaml\n"
        "yaml = import_yaml()\n"
        "print(yaml.safe_load('a: caf\\u00e9'))\n"
        "try:\n"
        "    yaml.safe_load('a: \\x07')\n"
        "except yaml.reader.ReaderError as err:\n"
        "    print(str(err).splitlines()[0])\n"
        "kept = yaml.reader.Reader.__dict__['NON_PRINTABLE']\n"
        "print(isinstance(kept, re.Pattern), kept.pattern == "
        "'[^\\x09\\x0a\\x0d\\x20-\\x7e\\x85\\xa0-\\ud7ff\\ue000-\\ufffd\\U00010000-\\U0010ffff]')\n"
    )
    lines = out.splitlines()
    assert lines[0] == "{'a': 'café'}"
    assert "special characters are not allowed" in lines[1]
    assert lines[2] == "True True"  # the stand-in gave its place to the compiled pattern


#: modules that import PyYAML themselves, each with its reason
_DIRECT: dict[str, str] = {}  # none: every module imports PyYAML through import_yaml


def test_the_package_imports_pyyaml_only_through_import_yaml() -> None:
    direct = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "yaml_import.py" or str(path.relative_to(SRC)) in _DIRECT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            if any(n == "yaml" or n.startswith("yaml.") for n in names):
                direct.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert direct == []


def test_threads_importing_at_once_all_get_the_whole_module() -> None:
    out = _run(
        "import threading\n"
        "from workload_map.yaml_import import import_yaml\n"
        "got = []\n"
        "def use():\n"
        "    yaml = import_yaml()\n"
        "    got.append(yaml.load('a: 1', Loader=yaml.CSafeLoader))\n"
        "threads = [threading.Thread(target=use) for _ in range(8)]\n"
        "for t in threads: t.start()\n"
        "for t in threads: t.join()\n"
        "print(got)\n"
    )
    assert out.strip() == str([{"a": 1}] * 8)
