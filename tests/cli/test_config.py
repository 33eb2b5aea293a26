"""Config file and environment precedence (REFERENCE §4; §8 item 40)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workload_map.cli.config import load_settings
from workload_map.cli.exits import UsageError


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("file_output", "env", "flag", "expected", "source"),
    [
        (None, {}, None, "table", "default"),
        ("json", {}, None, "json", "file"),
        ("json", {"KARTA_OUTPUT": "yaml"}, None, "yaml", "$KARTA_OUTPUT"),
        ("json", {"WLMAP_OUTPUT": "wide"}, None, "wide", "$WLMAP_OUTPUT"),
        ("json", {"WLMAP_OUTPUT": "wide", "KARTA_OUTPUT": "yaml"}, None, "wide", "$WLMAP_OUTPUT"),
        ("json", {"KARTA_OUTPUT": "yaml"}, "table", "table", "-o"),
        (None, {}, "table", "table", "-o"),
        (None, {"KARTA_OUTPUT": "json"}, None, "json", "$KARTA_OUTPUT"),
    ],
)
def test_output_precedence(tmp_path: Path, file_output, env, flag, expected, source) -> None:
    home = tmp_path / "home"
    environ = {"HOME": str(home), **env}
    if file_output:
        _write(home / ".karta" / "config.yaml", f"output: {file_output}\n")
    settings = load_settings(None, flag, environ)
    assert settings.output == expected
    if source == "file":
        assert settings.output_source.endswith("config.yaml")
    else:
        assert settings.output_source == source


def test_file_precedence(tmp_path: Path) -> None:
    home = tmp_path / "home"
    karta = _write(home / ".karta" / "config.yaml", "output: json\n")
    xdg = _write(home / ".config" / "wlmap" / "config.yaml", "output: yaml\n")
    env_file = _write(tmp_path / "env.yaml", "output: wide\n")
    flag_file = _write(tmp_path / "flag.yaml", "output: name\n")
    environ = {"HOME": str(home)}
    assert load_settings(None, None, environ).config_file == str(xdg)
    xdg.unlink()
    assert load_settings(None, None, environ).config_file == str(karta)
    environ["KARTA_CONFIG"] = str(env_file)
    assert load_settings(None, None, environ).output == "wide"
    environ["WLMAP_CONFIG"] = str(flag_file)
    assert load_settings(None, None, environ).output == "name"
    assert load_settings(str(karta), None, environ).output == "json"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("output: [json\n", "not valid YAML"),
        ("colour: always\n", "unknown key colour"),
        ("output: xml\n", "invalid output format 'xml'"),
        ("- output\n", "expected a mapping"),
    ],
)
def test_bad_config_files(tmp_path: Path, text: str, needle: str) -> None:
    path = _write(tmp_path / "c.yaml", text)
    with pytest.raises(UsageError) as info:
        load_settings(str(path), None, {"HOME": str(tmp_path)})
    assert needle in info.value.message
    assert str(path) in info.value.message


def test_missing_explicit_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_settings(str(tmp_path / "nope.yaml"), None, {"HOME": str(tmp_path)})
    with pytest.raises(UsageError, match=r"\$KARTA_CONFIG"):
        load_settings(None, None, {"HOME": str(tmp_path), "KARTA_CONFIG": "/nope.yaml"})


def test_bad_env_output(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"\$KARTA_OUTPUT"):
        load_settings(None, None, {"HOME": str(tmp_path), "KARTA_OUTPUT": "html"})


def test_empty_file_is_fine(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.yaml", "")
    assert load_settings(str(path), None, {"HOME": str(tmp_path)}).output == "table"


def test_cli_reports_config_errors(wlmap, home: Path) -> None:
    _write(home / ".karta" / "config.yaml", "outptu: json\n")
    r = wlmap(["definitions"])
    assert r.code == 2
    assert "unknown key outptu" in r.err


def test_inherited_output_that_does_not_apply_falls_back(wlmap, home: Path) -> None:
    r = wlmap(["describe", "-f", "/nope.yaml"], env={"KARTA_OUTPUT": "wide"})
    assert r.code == 2  # the unreadable file, not the inherited format
    assert "cannot read /nope.yaml" in r.err
