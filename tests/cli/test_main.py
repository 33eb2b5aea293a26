"""The command tree: help, version, usage errors, unknown commands, exit codes."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from workload_map import __version__
from workload_map.cli import definitions_cmd, describe_cmd


def test_help_lists_commands_and_exit_codes(wlmap) -> None:
    r = wlmap(["--help"])
    assert r.code == 0
    for command in ("describe", "get", "definitions", "validate", "jq", "completion"):
        assert command in r.out
    assert "__complete" not in r.out
    assert "exit codes" in r.out
    assert r.err == ""


def test_no_command_prints_help(wlmap) -> None:
    r = wlmap([])
    assert r.code == 0
    assert "usage: wlmap" in r.out


def test_version(wlmap) -> None:
    r = wlmap(["--version"])
    assert (r.code, r.out) == (0, f"{__version__}\n")


def test_unknown_command_suggests(wlmap) -> None:
    r = wlmap(["descrbe", "jobset/x"])
    assert r.code == 2
    assert r.err.startswith('error: unknown command "descrbe"')
    assert '"describe"' in r.err
    assert r.out == ""


def test_unknown_flag_is_usage_error(wlmap) -> None:
    r = wlmap(["get", "jobsets", "--bogus"])
    assert r.code == 2
    assert "error: unrecognized arguments: --bogus" in r.err
    assert "wlmap get --help" in r.err


def test_subcommand_help(wlmap) -> None:
    r = wlmap(["describe", "--help"])
    assert r.code == 0
    assert "--pod-limit" in r.out and "--kubeconfig" in r.out


def test_describe_type_with_a_definition_file_needs_a_name(wlmap) -> None:
    # `describe TYPE` describes all of them (tests/cli/test_describe_type.py); with
    # --definition it still names one workload, and says how
    r = wlmap(["describe", "jobset", "--definition", "k.yaml"])
    assert r.code == 2
    assert "TYPE/NAME" in r.err and "TYPE NAME" in r.err


def test_describe_without_anything(wlmap) -> None:
    r = wlmap(["describe"])
    assert r.code == 2
    assert "-f FILE" in r.err


def test_describe_rejects_wide(wlmap) -> None:
    r = wlmap(["describe", "-f", "x.yaml", "-o", "wide"])
    assert r.code == 2
    assert "describe does not support -o wide" in r.err


def test_validate_rejects_output(wlmap) -> None:
    r = wlmap(["validate", "x.yaml", "-o", "json"])
    assert r.code == 2
    assert "validate does not take -o" in r.err


def test_bad_output_value(wlmap) -> None:
    r = wlmap(["get", "jobsets", "-o", "xml"])
    assert r.code == 2
    assert "invalid output format 'xml'" in r.err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["get", "jobsets", "--chunk-size", "-1"], "--chunk-size"),
        (["get", "jobsets", "--phase", "Runing"], '"Running"'),
        (["get"], "get needs a TYPE"),
        (["get", "jobsets", "--all-types"], "--all-types"),
        (["get", "jobset/a", "-l", "app=x"], "selector"),
        (["get", "jobset/a", "-A"], "drop -A"),
        (["get", "jobset/a", "b"], "TYPE/NAME form"),
        (["get", "jobsets,,lws"], "an empty TYPE"),
        (["get", "jobset", "a/b"], "not both forms"),
        (["get", "/a"], "TYPE before"),
        (["describe", "jobset/"], "NAME after"),
        (["describe", "--pod-limit", "-3", "-f", "x"], "must not be negative"),
        (["describe", "jobset/a", "--pods", "p.yaml"], "--pods only applies with -f"),
        (["describe", "-f", "a.yaml", "jobset/a", "b"], "give the name once"),
        (["definitions", "--kind", "JobSet"], "--kind needs --group"),
        (["definitions", "--group", "g", "--version", "v1"], "--version needs --kind"),
        (["definitions", "x", "--group", "g"], "not both"),
        (["completion", "tcsh"], "invalid choice"),
    ],
)
def test_usage_errors(wlmap, argv: list[str], needle: str) -> None:
    r = wlmap(argv)
    assert r.code == 2, r.err
    assert r.err.startswith("error: ")
    assert needle in r.err
    assert r.out == ""


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts(wlmap, shell: str, tmp_path) -> None:
    r = wlmap(["completion", shell])
    assert r.code == 0
    assert "__complete" in r.out
    binary = shutil.which(shell)
    if binary is None:
        return  # syntax checked where the shell exists (bash always is)
    path = tmp_path / f"wlmap.{shell}"
    path.write_text(r.out)
    check = subprocess.run([binary, "-n", str(path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


def test_bash_is_checked() -> None:
    assert shutil.which("bash") is not None


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ([""], "describe"),
        (["ge"], "get"),
        (["get", "--"], "--all-namespaces"),
        (["describe", "-o", ""], "yaml"),
        (["get", "--phase", ""], "Running"),
        (["completion", ""], "fish"),
    ],
)
def test_complete_static(wlmap, words: list[str], expected: str) -> None:
    r = wlmap(["__complete", *words])
    assert r.code == 0
    assert expected in r.out.splitlines()


def test_complete_files(wlmap) -> None:
    r = wlmap(["__complete", "describe", "-f", ""])
    assert r.out == ":files\n"


def test_complete_never_errors_without_cluster(wlmap) -> None:
    r = wlmap(["__complete", "get", "jobset", ""])
    assert r.code == 0
    assert r.err == ""


def test_jq_gets_the_raw_arguments(wlmap) -> None:
    r = wlmap(["jq", "-c", ".a"], stdin='{"a": [1, 2]}')
    assert (r.code, r.out) == (0, "[1,2]\n")
    r = wlmap(["--context", "x", "jq", "-r", ".b"], stdin='{"b": "hi"}')
    assert (r.code, r.out) == (0, "hi\n")


def test_validate_dispatch(wlmap, tmp_path) -> None:
    r = wlmap(["validate", "-"], stdin="x: 1\n")
    assert r.code == 1 and r.out.startswith("INVALID: -")
    r = wlmap(["validate", str(tmp_path / "missing.yaml")])
    assert r.code == 2


def test_missing_kubeconfig_is_an_unreadable_file(wlmap, tmp_path) -> None:
    r = wlmap(["get", "jobsets", "--kubeconfig", str(tmp_path / "nope")])
    assert r.code == 2 and "--kubeconfig" in r.err and "no such file" in r.err
    r = wlmap(["get", "jobsets"])
    assert r.code == 1 and "no cluster configured" in r.err


def test_help_command(wlmap) -> None:
    assert wlmap(["help"]).out.startswith("usage: wlmap")
    r = wlmap(["help", "get"])
    assert r.code == 0 and r.out.startswith("usage: wlmap get")


def test_complete_output_offers_only_what_the_command_takes(wlmap) -> None:
    assert wlmap(["__complete", "describe", "-o", ""]).out.split() == list(describe_cmd.OUTPUTS)
    assert wlmap(["__complete", "definitions", "-o", ""]).out.split() == list(
        definitions_cmd.OUTPUTS
    )
    assert "name" in wlmap(["__complete", "get", "-o", ""]).out.split()
    assert wlmap(["__complete", "validate", "-o", ""]).out == ""


def test_missing_kubeconfig_env_names_the_file(wlmap, tmp_path) -> None:
    missing = str(tmp_path / "nonexistent")
    r = wlmap(["get", "jobsets"], env={"KUBECONFIG": missing})
    assert r.code == 1
    assert f"KUBECONFIG names {missing}, which does not exist" in r.err
