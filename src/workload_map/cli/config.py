"""User settings: a config file and environment variables, with the reference's precedence.

File: ``--config`` > ``$WLMAP_CONFIG`` / ``$KARTA_CONFIG`` > ``~/.config/wlmap/config.yaml`` >
``~/.karta/config.yaml``. A missing default file is ignored; a missing explicit one, bad YAML, an
unknown key or a bad value is an error. Output format: ``table`` < file < ``$WLMAP_OUTPUT`` /
``$KARTA_OUTPUT`` < an explicit ``-o`` (even when it equals the default).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from workload_map.cli.exits import UsageError
from workload_map.cli.printers import is_template_output
from workload_map.kube import paths
from workload_map.kube.flags import parse_timeout
from workload_map.yaml_import import import_yaml

__all__ = ["OUTPUTS", "Settings", "default_config_paths", "load_settings", "parse_request_timeout"]

OUTPUTS = ("table", "wide", "json", "yaml", "name")
_KEYS = {"output", "clusterKartaWarning"}
# values of $WLMAP_CLUSTER_KARTA_WARNING that turn the notice off
_OFF = {"0", "false", "no", "off"}


class Settings(msgspec.Struct, frozen=True):
    """Resolved settings and where each came from (for error messages)."""

    output: str = "table"
    output_source: str = "default"
    config_file: str | None = None
    # the "cannot list Kartas" / "no Karta CRD" notice; off for users who may only read their
    # namespace (config clusterKartaWarning: false, or $WLMAP_CLUSTER_KARTA_WARNING=0)
    cluster_karta_warning: bool = True


def default_config_paths(environ: Mapping[str, str]) -> list[str]:
    """The default settings files, in order, each as the ``str`` of its ``Path`` (no pathlib
    at start-up: :mod:`workload_map.kube.paths`)."""
    home = environ.get("HOME") or paths.home()
    base = environ.get("XDG_CONFIG_HOME") or paths.join(home, ".config")
    return [paths.join(base, "wlmap", "config.yaml"), paths.join(home, ".karta", "config.yaml")]


def _explicit_file(flag: str | None, environ: Mapping[str, str]) -> tuple[str, str] | None:
    if flag:
        return flag, "--config"
    for var in ("WLMAP_CONFIG", "KARTA_CONFIG"):
        if environ.get(var):
            return environ[var], f"${var}"
    return None


def load_settings(
    config_flag: str | None, output_flag: str | None, environ: Mapping[str, str]
) -> Settings:
    """Settings from the config file, the environment and ``-o``; raises :class:`UsageError`."""
    output, source, path_used = "table", "default", None
    karta_warning = True
    explicit = _explicit_file(config_flag, environ)
    if explicit is not None:
        path, origin = explicit
        path_used = paths.expand(path)
        if not paths.is_file(path_used):
            raise UsageError(f"config file {path} (from {origin}): no such file")
    else:
        path_used = next((p for p in default_config_paths(environ) if paths.is_file(p)), None)
    if path_used is not None:
        data = _read(path_used)
        if "clusterKartaWarning" in data:
            value = data["clusterKartaWarning"]
            if not isinstance(value, bool):
                raise UsageError(
                    f"config file {path_used}: key clusterKartaWarning: expected true or false, "
                    f"got {value!r}"
                )
            karta_warning = value
        if "output" in data:
            output, source = (
                _check_output(data["output"], f"config file {path_used}: key output"),
                path_used,
            )
    for var in ("WLMAP_OUTPUT", "KARTA_OUTPUT"):
        value = environ.get(var)
        if value:
            output, source = _check_output(value, f"${var}"), f"${var}"
            break
    if output_flag is not None:
        output, source = _check_output(output_flag, "-o/--output"), "-o"
    env_warning = environ.get("WLMAP_CLUSTER_KARTA_WARNING")
    if env_warning:
        karta_warning = env_warning.strip().lower() not in _OFF
    return Settings(output, source, path_used, karta_warning)


def _check_output(value: object, where: str) -> str:

    if isinstance(value, str) and is_template_output(value):
        return value  # jsonpath=…, custom-columns=…: parsed by the command that prints
    if not isinstance(value, str) or value not in OUTPUTS:
        raise UsageError(f"{where}: invalid output format {value!r} (valid: {', '.join(OUTPUTS)})")
    return value


def _read(path: str) -> dict[str, object]:

    yaml = import_yaml()

    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as exc:
        raise UsageError(f"config file {path}: {exc.strerror or exc}") from exc
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml
    except yaml.YAMLError as exc:
        raise UsageError(f"config file {path}: not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(
            f"config file {path}: expected a mapping of settings, got {type(data).__name__}"
        )
    unknown = sorted(str(k) for k in data if k not in _KEYS)
    if unknown:
        raise UsageError(
            f"config file {path}: unknown key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})"
        )
    return {str(k): v for k, v in data.items()}


def parse_request_timeout(text: str) -> float | None:
    """kubectl's ``--request-timeout`` (:func:`workload_map.kube.flags.parse_timeout`: seconds
    or a Go duration, ``0`` no timeout); raises :class:`UsageError`."""
    try:
        return parse_timeout(text)
    except ValueError as err:
        raise UsageError(str(err)) from None
