"""Each module's names are its own: no module imports another's underscore name (issue 10).

A name used across modules is public in the module that defines it (the package's ``__all__``
still says what the package exports); a private name is private to its module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import workload_map

SRC = Path(workload_map.__file__).parent


def _private_imports(root: Path = SRC) -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level:
                if isinstance(node, ast.ImportFrom) and node.level:
                    # relative imports are across modules too
                    found.extend(
                        (path.relative_to(root).as_posix(), f".{node.module or ''}", a.name)
                        for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")
                    )
                continue
            if not (node.module or "").startswith("workload_map"):
                continue
            found.extend(
                (path.relative_to(root).as_posix(), node.module or "", a.name)
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            )
    return found


def test_no_module_imports_another_modules_private_name() -> None:
    found = _private_imports()
    assert found == []


def test_the_check_sees_an_import_of_a_private_name(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from workload_map.jq.values import _num_kind, compare\n"
        "from workload_map.jq import __version__\n"
        "from os import _exit\n"
        "from ._b import _c\n",
        encoding="utf-8",
    )
    assert _private_imports(tmp_path) == [
        ("a.py", "workload_map.jq.values", "_num_kind"),
        ("a.py", "._b", "_c"),
    ]
