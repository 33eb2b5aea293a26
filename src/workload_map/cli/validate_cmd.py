"""``wlmap validate FILE|- [--crd CRD]...``: the author's check before a definition ships.

Prints ``OK: …`` or ``INVALID: …`` plus one finding per line on stdout, advice as ``warning: …``
on stderr, and exits 0 (valid), 1 (invalid, including schema problems such as an unknown field,
a wrong type or an unsupported apiVersion) or 2 (unreadable, not YAML/JSON, or a document that is
not an object).

``--crd`` takes a file of one or more CRDs (several documents, or a ``kind: List``), and may be
given more than once (the CRDs of every file count together, as if they were one file): the root
kind's checks the workload paths, and the CRD of a kind a reference reads (a TrainJob's
``ClusterTrainingRuntime``) checks every ``$name`` path against that kind's schema.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Mapping, Sequence
from typing import IO, Any

from workload_map import model
from workload_map.cli.context import Context
from workload_map.cli.exits import UsageError
from workload_map.cli.manifests import read_text
from workload_map.model import validate_loaded
from workload_map.model.findings import Finding, FindingCode
from workload_map.model.load import (
    KartaLoadError,
    LenientLoad,
    parse_documents,
    read_karta_document,
)

__all__ = ["run"]

_OK, _INVALID, _UNREADABLE = 0, 1, 2


def _crds(docs: list[Any]) -> list[Mapping[str, Any]]:
    items: list[Any] = []
    for d in docs:
        if isinstance(d, Mapping) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            items.extend(d["items"])
        else:
            items.append(d)
    return [
        d for d in items if isinstance(d, Mapping) and d.get("kind") == "CustomResourceDefinition"
    ]


def _defines(crd: Mapping[str, Any], group: str, kind: str) -> bool:
    spec = crd.get("spec")
    if not isinstance(spec, Mapping):
        return False
    names = spec.get("names")
    return isinstance(names, Mapping) and (spec.get("group") or "", names.get("kind")) == (
        group,
        kind,
    )


def _pick_crd(
    docs: list[Any], group: str | None, kind: str | None, karta: Any = None
) -> Mapping[str, Any] | None:
    """The CRD of the root kind; None when the files hold only the CRDs of kinds the
    definition's references read (their checks run; the root's paths are then not checked)."""
    crds = _crds(docs)
    if karta is not None and not any(_defines(c, group or "", kind or "") for c in crds):
        referenced = [
            g
            for r in karta.spec.structure_definition.references
            for g in (r.target.kinds if r.target is not None else ())
        ]
        if any(_defines(c, g.group, g.kind) for c in crds for g in referenced):
            return None
    for crd in crds:
        spec = crd.get("spec")
        if not isinstance(spec, Mapping):
            continue
        names = spec.get("names")
        if isinstance(names, Mapping) and spec.get("group") == group and names.get("kind") == kind:
            return crd
    return crds[0]


def _labelled(path: str, docs: list[Any]) -> list[tuple[str, Any]]:
    """Each Karta of the file with how messages name it: by its metadata.name, with its place
    when there are several. A top-level YAML list and a ``kind: List`` (what ``kubectl get kartas
    -o yaml`` prints) hold several."""
    items: list[tuple[str, Any]] = []
    for i, doc in enumerate(docs):
        place = f"document {i + 1}" if len(docs) > 1 else ""
        inner: list[Any] | None = None
        if isinstance(doc, list):
            inner = doc
        elif (
            isinstance(doc, Mapping)
            and doc.get("kind") == "List"
            and isinstance(doc.get("items"), list)
        ):
            inner = doc["items"]
        if inner is None:
            items.append((place, doc))
            continue
        for j, item in enumerate(inner):
            items.append((f"{place + ', ' if place else ''}item {j + 1}", item))
    several = len(items) > 1
    out = []
    for place, doc in items:
        meta = doc.get("metadata") if isinstance(doc, Mapping) else None
        named = meta.get("name") if isinstance(meta, Mapping) else None
        if not several:  # one Karta: the file names it (as before)
            out.append((path, doc))
            continue
        label = f'Karta "{named}" ({place})' if isinstance(named, str) and named else place
        out.append((f"{path}: {label}", doc))
    return out


def run_args(args: argparse.Namespace, ctx: Context) -> int:
    """``wlmap validate FILE [--crd CRDFILE]...`` (the command table's entry)."""
    if ctx.settings.output_source == "-o":
        raise UsageError("validate does not take -o; it prints OK or INVALID with findings")
    return run(args.file, args.crd, ctx.stdin, ctx.stdout, ctx.stderr)


def _read_crds(paths: Sequence[str], stdin: IO[str] | None) -> list[Any]:
    """The documents of every CRD file, in order; each file must hold a CRD (the error names
    the one that does not)."""
    docs: list[Any] = []
    for path in paths:
        found = parse_documents(read_text(path, stdin), source=path)
        if not _crds(found):
            raise UsageError(f"{path} contains no CustomResourceDefinition")
        docs.extend(found)
    return docs


def run(
    path: str,
    crd: str | Sequence[str] | None,
    stdin: IO[str] | None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Validate the Karta definition(s) at ``path`` (``-`` for stdin) against the CRD files
    ``crd`` (one path or several; none for no schema checks); return the exit code."""

    name = path
    crd_paths = [crd] if isinstance(crd, str) else list(crd or ())
    # how warnings name the CRD files: the one file, or all of them
    crd_names = ", ".join(crd_paths)
    try:
        text = read_text(path, stdin)
        crd_docs = None
        if crd_paths:
            crd_docs = _read_crds(crd_paths, stdin if path != "-" else None)
    except UsageError as exc:  # the file itself cannot be read
        stderr.write(f"error: {exc.message}\n")
        return _UNREADABLE
    except KartaLoadError as exc:
        stderr.write(f"error: {exc}\n")
        return _UNREADABLE

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecationWarning)
        try:
            docs = parse_documents(text, source=name)
            if not docs:
                raise KartaLoadError("contains no document", source=name)
            loaded: list[tuple[str, LenientLoad]] = []
            for where, doc in _labelled(name, docs):
                # schema problems become findings; only a non-object document is unreadable
                loaded.append((where, read_karta_document(doc, source=where)))
        except KartaLoadError as exc:
            stderr.write(f"error: {exc}\n")
            return _UNREADABLE
    for warning in caught:
        stderr.write(f"warning: {warning.message}\n")

    status = _OK
    for where, result in loaded:
        karta = result.karta
        target = None
        if crd_docs is not None and karta is not None:
            gvk = karta.root_gvk
            target = _pick_crd(
                crd_docs, gvk.group if gvk else None, gvk.kind if gvk else None, karta
            )
            if target is None:
                stderr.write(
                    f"warning: {where}: {crd_names} {'holds' if len(crd_paths) == 1 else 'hold'} no CRD of {gvk.kind if gvk else 'its root'}"
                    "; only the paths reading references were checked\n"
                )
        findings: list[Finding]
        try:
            findings = validate_loaded(result, crd=target)
            if crd_docs is not None and karta is not None:
                # the schema checks (and difflib) load here, on first use: only with --crd
                findings += model.check_references_against_crds(karta, _crds(crd_docs))
        except RecursionError:
            findings = [
                Finding("", FindingCode.TOO_DEEP, "error", "the definition nests too deeply")
            ]
        errors = [f for f in findings if f.is_error]
        for finding in findings:
            if not finding.is_error:
                stderr.write(f"warning: {where}: {finding}\n")
        if errors or karta is None:
            stdout.write(f"INVALID: {where}\n")
            for finding in errors:
                stdout.write(f"  {finding}\n")
            stderr.write(f"error: {len(errors)} finding(s) in {where}\n")
            status = _INVALID
        else:
            gvk = karta.root_gvk
            stdout.write(f"OK: {where} is a valid Karta definition (GVK: {gvk})\n")
    return status
