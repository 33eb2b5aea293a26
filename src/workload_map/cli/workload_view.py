"""One object read through its definition, the same way for every command.

``describe``, ``describe TYPE``, ``get`` and ``verify`` all build the engine's ``Workload`` from
an object, its candidate pods and a resolved definition, and turn what the engine reports as an
evaluation failure (a :class:`~workload_map.errors.WlmapError` or a jq error) into one
:class:`DescribeFailed` naming the object and the definition. Any other exception is a bug and
is left to the one boundary in ``cli.main``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from workload_map.cli.exits import ERROR, CliError
from workload_map.cli.manifests import describe_object
from workload_map.engine import Workload
from workload_map.engine.structure import prepare
from workload_map.errors import WlmapError
from workload_map.jq import JqError

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition
    from workload_map.engine import Workload

T = TypeVar("T")

__all__ = [
    "DescribeFailed",
    "describe_view",
    "engine_errors",
    "evaluate",
    "read_workload",
    "timed_out_expressions",
    "view_name",
]


def engine_errors() -> tuple[type[Exception], ...]:
    """What evaluating a definition on an object may raise as a known failure (imported on
    first use: the jq package is a good part of a command's start-up)."""

    return (WlmapError, JqError)


def timed_out_expressions(used: Iterable[Definition]) -> list[tuple[str, str]]:
    """(definition, expression) of every expression of the ``used`` definitions that ran past
    its deadline (the engine stopped evaluating it for the rest of the command)."""
    broken: tuple[type[BaseException], ...] = (*engine_errors(), RecursionError)
    out: list[tuple[str, str]] = []
    for definition in used:
        try:
            structure = prepare(definition.karta, validate=False)  # cached by the engine
        except broken:  # a broken definition has no timings to report
            continue
        out.extend((definition.name, text) for text in structure.expressions.timed_out())
    return out


class DescribeFailed(CliError):
    """The engine could not read ``label`` through ``definition`` (exit 1)."""

    def __init__(self, label: str, definition: Definition, cause: Exception) -> None:
        super().__init__(
            f"cannot describe {label} with definition {definition.name} "
            f"({definition.origin}): {cause}",
            ERROR,
        )
        self.label = label
        self.cause = cause


def evaluate(
    obj: dict[str, Any],
    pods: list[dict[str, Any]] | None,
    definition: Definition,
    read: Callable[[Workload], T],
    *,
    file_mode: bool = False,
    where: str | None = None,
    references: Any = None,
) -> T:
    """What ``read`` takes from the engine's ``Workload`` of ``obj``, inside the one error
    boundary: what the engine reports as an evaluation failure while the workload is built or
    read is a :class:`DescribeFailed` (``where``, the file and document it was read from,
    goes into the message)."""

    try:
        workload = Workload(
            definition.karta,
            obj,
            pods,
            definition_name=definition.name,
            origin=definition.origin,
            # the catalog's definitions are package data its tests validate (every file, no
            # findings): validating one again on each command costs ~10 ms of start-up
            validate=definition.origin != "catalog",
            file_mode=file_mode,
            # a resolver or the objects at hand (the other documents of -f, --ref files)
            references=references,
        )
        return read(workload)
    except engine_errors() as exc:  # anything else is a bug: main() says so
        label = describe_object(obj) + (f" in {where}" if where else "")
        raise DescribeFailed(label, definition, exc) from exc


def read_workload(
    obj: dict[str, Any],
    pods: list[dict[str, Any]] | None,
    definition: Definition,
    *,
    file_mode: bool = False,
    explain: bool = False,
    where: str | None = None,
    references: Any = None,
) -> tuple[Workload, dict[str, Any]]:
    """The engine's ``Workload`` for ``obj`` and its describe view (a fresh dict); ``where``
    (the file and document it was read from) goes into the error message."""
    return evaluate(
        obj,
        pods,
        definition,
        lambda workload: (workload, dict(workload.describe(explain=explain))),
        file_mode=file_mode,
        where=where,
        references=references,
    )


def describe_view(
    obj: dict[str, Any],
    pods: list[dict[str, Any]] | None,
    definition: Definition,
    *,
    file_mode: bool = False,
    explain: bool = False,
    where: str | None = None,
    references: Any = None,
) -> dict[str, Any]:
    """The describe view of ``obj`` (what ``describe -o json`` prints)."""
    found = read_workload(
        obj,
        pods,
        definition,
        file_mode=file_mode,
        explain=explain,
        where=where,
        references=references,
    )
    return found[1]


def view_name(view: dict[str, Any]) -> str:
    """``kind.group/name`` of a view, as ``kubectl … -o name`` prints objects."""
    group = str(view.get("apiVersion") or "").rpartition("/")[0]
    kind = str(view.get("kind") or "").lower() + (f".{group}" if group else "")
    return f"{kind}/{view.get('name')}"
