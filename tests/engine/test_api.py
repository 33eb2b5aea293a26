"""The engine's public surface: exported names and the accepted forms of a definition."""

from __future__ import annotations

from pathlib import Path

import workload_map as wm
import workload_map.engine as engine
from tests.engine.conftest import FIXTURES, load_fixture


def test_exported_names_exist() -> None:
    for name in engine.__all__:
        assert hasattr(engine, name), name
    assert wm.Workload is engine.Workload


def test_definition_as_model_dict_text_or_path() -> None:
    _, obj, _ = load_fixture("trainer")
    path = FIXTURES / "trainer" / "karta.yaml"
    forms = [str(path), Path(path).read_text(), wm.load_karta(path)]
    phases = [wm.Workload(form, obj).phases() for form in forms]
    assert phases == [["Running", "Initializing"]] * 3
    wl = wm.Workload(forms[2], obj)
    assert wl.describe()["definition"] == {"name": "train-example-com-trainer-v1", "origin": "file"}
