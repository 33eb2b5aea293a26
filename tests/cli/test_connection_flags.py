"""One set of connection flags, before or after the subcommand, and one error boundary.

Every command (and the three processes ``wlmap`` starts) takes kubectl's connection flags on
either side of its name, with kubectl's precedence: ``--kubeconfig``, then ``$KUBECONFIG``,
then ``~/.kube/config``. Which file a command used is told by the server it could not reach:
each kubeconfig here names its own closed loopback port. No bad kubeconfig, unreadable file or
unreachable server prints a traceback, in any command.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

# the commands that connect, as run in-process by ``main`` (the wlmap fixture)
CLI = {
    "get": ["get", "jobsets"],
    "describe": ["describe", "jobset/train"],
    "crd apply": ["crd", "apply"],
    "definitions install": ["definitions", "install", "--all"],
    "definitions uninstall": ["definitions", "uninstall", "--all"],
}
# the long-running processes, run as `python -m workload_map.cli …` (they set up logging,
# signal handlers and an event loop of their own)
PROCESSES = {
    "serve": ["serve", "--port", "0"],
    "exporter": ["exporter", "--workload-metrics-bind-address", "127.0.0.1:0"],
    "operator": ["operator", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"],
}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def kubeconfig(path: Path, ports: dict[str, int], current: str) -> Path:
    """A kubeconfig with one context per entry of ``ports``, each on its own server."""
    clusters = "".join(
        f'- {{name: {n}, cluster: {{server: "https://127.0.0.1:{p}", '
        "insecure-skip-tls-verify: true}}\n"
        for n, p in ports.items()
    )
    contexts = "".join(f"- {{name: {n}, context: {{cluster: {n}, user: u}}}}\n" for n in ports)
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n{clusters}"
        "users: [{name: u, user: {token: t}}]\n"
        f"contexts:\n{contexts}"
        f"current-context: {current}\n"
    )
    return path


@pytest.fixture
def named(tmp_path: Path) -> Iterator[tuple[Path, int, Path, int]]:
    """(the file the flag names, its port, the file $KUBECONFIG names, its port)."""
    flag_port, env_port = closed_port(), closed_port()
    yield (
        kubeconfig(tmp_path / "flag.yaml", {"flag": flag_port}, "flag"),
        flag_port,
        kubeconfig(tmp_path / "env.yaml", {"env": env_port}, "env"),
        env_port,
    )


def run_process(args: list[str], env: dict[str, str], home: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "workload_map.cli", *args],
        capture_output=True,
        text=True,
        env={
            "HOME": str(home),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT / "src"),  # this checkout's sources
            # the connection is the operator's own: whichever controller plug-ins the
            # environment installed stay out of it
            "WLMAP_OPERATOR_SKIP_PLUGINS": "gangs,metrics",
            **env,
        },
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def names_port(text: str, port: int) -> bool:
    """Whether an error names the server on ``port`` (either client's wording)."""
    return re.search(rf"(:|port=){port}\b", text) is not None


def no_traceback(text: str) -> None:
    assert "Traceback" not in text and "internal error" not in text, text


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("command", sorted(CLI))
def test_the_flag_wins_over_kubeconfig_env_on_either_side(
    wlmap: Any, named: tuple[Path, int, Path, int], command: str, where: str
) -> None:
    flag, flag_port, env, env_port = named
    flags = ["--kubeconfig", str(flag), "--request-timeout", "5s"]
    argv = [*flags, *CLI[command]] if where == "before" else [*CLI[command], *flags]
    result = wlmap(argv, env={"KUBECONFIG": str(env)})
    assert result.code == 1, result
    assert names_port(result.err, flag_port) and not names_port(result.err, env_port), result.err
    no_traceback(result.err)


@pytest.mark.parametrize("command", sorted(CLI))
def test_context_before_the_subcommand_selects_the_cluster(
    wlmap: Any, tmp_path: Path, command: str
) -> None:
    ports = {"one": closed_port(), "two": closed_port()}
    config = kubeconfig(tmp_path / "kc.yaml", ports, "one")
    result = wlmap(["--context", "two", *CLI[command]], env={"KUBECONFIG": str(config)})
    assert result.code == 1, result
    assert names_port(result.err, ports["two"]) and not names_port(result.err, ports["one"])
    no_traceback(result.err)


@pytest.mark.parametrize("command", sorted(PROCESSES))
def test_processes_take_the_flags_before_their_name(
    named: tuple[Path, int, Path, int], home: Path, command: str
) -> None:
    flag, flag_port, env, env_port = named
    code, output = run_process(
        ["--kubeconfig", str(flag), *PROCESSES[command]], {"KUBECONFIG": str(env)}, home
    )
    assert code == 1, output
    assert names_port(output, flag_port) and not names_port(output, env_port), output
    assert "cannot reach" in output
    no_traceback(output)


def _bad_kubeconfigs(tmp_path: Path) -> dict[str, tuple[list[str], dict[str, str], str]]:
    """case -> (flags, environment, what the error says)"""
    malformed = tmp_path / "malformed.yaml"
    malformed.write_text("apiVersion: v1\nclusters: [ {name: c, cluster: {server: x}\n")
    missing = str(tmp_path / "missing.yaml")
    return {
        "missing --kubeconfig": (["--kubeconfig", missing], {}, "missing.yaml"),
        "missing $KUBECONFIG": ([], {"KUBECONFIG": missing}, "missing.yaml"),
        "malformed": (["--kubeconfig", str(malformed)], {}, "not valid YAML"),
    }


@pytest.mark.parametrize("case", ["missing --kubeconfig", "missing $KUBECONFIG", "malformed"])
@pytest.mark.parametrize("command", sorted(CLI))
def test_a_bad_kubeconfig_is_an_error_message(
    wlmap: Any, tmp_path: Path, command: str, case: str
) -> None:
    flags, env, says = _bad_kubeconfigs(tmp_path)[case]
    result = wlmap([*flags, *CLI[command]], env=env)
    assert result.code in (1, 2), result
    assert result.err.startswith("error:") and says in result.err, result.err
    no_traceback(result.err)


@pytest.mark.parametrize("case", ["missing --kubeconfig", "missing $KUBECONFIG", "malformed"])
@pytest.mark.parametrize("command", sorted(PROCESSES))
def test_a_bad_kubeconfig_ends_a_process_with_a_message(
    tmp_path: Path, home: Path, command: str, case: str
) -> None:
    flags, env, says = _bad_kubeconfigs(tmp_path)[case]
    code, output = run_process([*flags, *PROCESSES[command]], env, home)
    assert code == 1, output
    assert says in output, output
    no_traceback(output)


def test_definitions_with_a_bad_kubeconfig_warns_and_lists_the_catalog(
    wlmap: Any, tmp_path: Path
) -> None:
    flags, env, says = _bad_kubeconfigs(tmp_path)["malformed"]
    result = wlmap(["definitions", *flags], env=env)
    assert result.code == 0 and "jobset" in result.out
    assert says in result.err
    no_traceback(result.err)


@pytest.mark.parametrize(
    "argv",
    [
        ["--context", "a", "crd", "apply", "--context", "b"],
        ["crd", "apply", "--context", "a", "--context", "b"],
        ["--context", "a", "--context", "b", "describe", "jobset/x"],
        ["--context", "a", "definitions", "install", "--all", "--context", "b"],
        ["--all-contexts", "describe", "jobset/x"],
    ],
)
def test_a_second_context_is_a_usage_error_for_one_cluster_commands(
    wlmap: Any, argv: list[str]
) -> None:
    result = wlmap(argv)
    assert result.code == 2, result
    assert "context" in result.err
    no_traceback(result.err)


@pytest.mark.parametrize(
    "argv",
    [
        ["--context", "a", "get", "jobsets", "--context", "b"],
        ["get", "jobsets", "--all-contexts"],
        ["--all-contexts", "get", "jobsets"],
    ],
)
def test_get_takes_several_contexts_before_and_after_the_subcommand(
    wlmap: Any, argv: list[str]
) -> None:
    """Each context is listed (here none can be: there is no kubeconfig), before and after the
    subcommand counted together (tests/cli/test_get_many_clusters.py lists real ones)."""
    result = wlmap(argv)
    assert result.code == 1, result
    no_traceback(result.err)
    if "--all-contexts" in argv:
        assert "the kubeconfig has no contexts" in result.err, result
    else:
        assert "context a: " in result.err and "context b: " in result.err, result


def test_processes_refuse_a_second_context_but_serve(home: Path) -> None:
    code, output = run_process(["--context", "a", "exporter", "--context", "b"], {}, home)
    assert code == 2 and "--context given more than once" in output, output
    # serve takes several: each is tried (none can be served without a kubeconfig)
    code, output = run_process(["--context", "a", "serve", "--context", "b"], {}, home)
    assert code == 1 and "no context could be served: a: " in output, output


@pytest.mark.parametrize(
    "argv",
    [
        ["--kubeconfig", "K", "--context", "c", "--as", "u", "--as-group", "g", "-n", "ns",
         "--request-timeout", "5s", "verify", "--definition", "D", "W"],
        ["verify", "--definition", "D", "W", "--kubeconfig", "K", "--context", "c", "--as",
         "u", "--as-group", "g", "-n", "ns", "--request-timeout", "5s"],
    ],
)  # fmt: skip
def test_offline_commands_take_the_flags_too(wlmap: Any, argv: list[str]) -> None:
    result = wlmap(argv)
    assert "unrecognized" not in result.err and "--definition cannot read D" in result.err


def test_a_bad_request_timeout_is_a_usage_error_before_or_after(wlmap: Any) -> None:
    for argv in (
        ["--request-timeout", "soon", "crd", "apply"],
        ["crd", "apply", "--request-timeout", "soon"],
    ):
        result = wlmap(argv)
        assert result.code == 2 and "invalid --request-timeout 'soon'" in result.err


def test_the_operator_entry_point_takes_the_same_flags(tmp_path: Path, home: Path) -> None:
    """``workload-map-operator`` (``python -m workload_map.operator``) is ``wlmap operator``."""
    missing = str(tmp_path / "missing.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "workload_map.operator", "--kubeconfig", missing],
        capture_output=True,
        text=True,
        env={
            "HOME": str(home),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT / "src"),
            "WLMAP_OPERATOR_SKIP_PLUGINS": "gangs,metrics",
        },
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and "missing.yaml" in done.stderr, done.stderr
    no_traceback(done.stderr)
    code, output = run_process(["operator", "--context", "a", "--context", "b"], {}, home)
    assert code == 2 and "--context given more than once" in output, output
