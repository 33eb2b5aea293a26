"""The built-in catalog: our Karta definitions shipped as package data, looked up by GVK.

Why a registry rather than a dict: the CLI must start fast (``describe -f`` resolves one kind),
so nothing is parsed until asked for. An exact lookup opens only the file named by the slug; a
lookup by group and kind (or by a version served through another definition) opens only the
files whose name starts with that group and kind; listing parses everything once. Parsed
documents are cached; every :class:`Karta` handed out is built fresh from a deep copy, so callers
may keep or change what they get.

One definition may describe several served versions of a kind whose shape is the same in every
path it uses. It says so with the annotation ``workload-map.run.ai/served-versions`` (a comma
list that includes the definition's own version). The catalog then answers for each of those
versions with a copy whose root version and name are that version's (``metadata.name`` is always
the slug of the root GVK), so each copy is a complete Karta that a cluster can hold and KAI can
find by its exact GVK labels.
"""

from __future__ import annotations

import _thread
import copy
import os
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from workload_map.catalog.bundle import BUNDLE_NAME, Bundle
from workload_map.catalog.stamps import GROUP_LABEL, KIND_LABEL, VERSION_LABEL
from workload_map.errors import WlmapError
from workload_map.model import GVK, load_karta
from workload_map.model.views import View
from workload_map.yaml_import import import_yaml

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from workload_map.model import Karta

# no __all__: the package (``__init__``) lists what is public

SERVED_VERSIONS_ANNOTATION = "workload-map.run.ai/served-versions"
DERIVED_FROM_ANNOTATION = "workload-map.run.ai/derived-from"
CHECKED_AGAINST_ANNOTATION = "workload-map.run.ai/checked-against"

_SUFFIX = ".yaml"


class CatalogError(WlmapError):
    """A built-in definition is malformed, misnamed or clashes with another one."""


def slug(group: str, version: str, kind: str) -> str:
    """The reference's catalog name: group with dots as dashes (``core`` for ""), kind, version."""
    return f"{(group or 'core').replace('.', '-')}-{kind.lower()}-{version}"


#: text, compiled (and kept) by ``re`` when versions are first ordered, not at import
_VERSION = r"^v(\d+)(?:(alpha|beta)(\d+))?\Z"


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key, most stable first, as Kubernetes orders versions (v1 > v1beta1 > v1alpha1)."""
    m = re.match(_VERSION, version)
    if m is None:
        return (3, 0, 0, version)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor, version)


class CatalogEntry(View):
    """One answer of the catalog: a definition for one exact GVK.

    ``source`` names the packaged file; ``derived`` is true when the entry is another served
    version of that file's definition.
    """

    name: str
    group: str
    version: str
    kind: str
    source: str
    derived: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _root_gvk(doc: Mapping[str, Any], source: str) -> tuple[str, str, str]:
    try:
        kind = doc["spec"]["structureDefinition"]["rootComponent"]["kind"]
        group, version, name = kind.get("group", ""), kind["version"], kind["kind"]
    except (KeyError, TypeError, AttributeError):
        raise CatalogError(
            f"catalog definition {source}: spec.structureDefinition.rootComponent.kind "
            "must give group, version and kind"
        ) from None
    if not (isinstance(group, str) and isinstance(version, str) and isinstance(name, str)):
        raise CatalogError(f"catalog definition {source}: root kind fields must be strings")
    if not version or not name:
        raise CatalogError(f"catalog definition {source}: root component GVK incomplete")
    return group, version, name


def _served_versions(doc: Mapping[str, Any], own: str, source: str) -> list[str]:
    annotations = (doc.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(SERVED_VERSIONS_ANNOTATION)
    if text is None:
        return [own]
    if not isinstance(text, str):
        raise CatalogError(
            f"catalog definition {source}: {SERVED_VERSIONS_ANNOTATION} must be a string"
        )
    versions = [v.strip() for v in text.split(",") if v.strip()]
    if own not in versions:
        raise CatalogError(
            f"catalog definition {source}: {SERVED_VERSIONS_ANNOTATION} {text!r} must include "
            f"the definition's own version {own!r}"
        )
    if len(set(versions)) != len(versions):
        raise CatalogError(
            f"catalog definition {source}: {SERVED_VERSIONS_ANNOTATION} repeats a version"
        )
    return [own, *[v for v in versions if v != own]]


def _copy(value: Any) -> Any:
    """A deep copy of a parsed document: its dicts and lists new, its scalars shared (they are
    immutable). About three times faster than ``copy.deepcopy``, which keeps a memo of every
    object for cycles a JSON or YAML document cannot have; ``definitions`` copies every built-in
    definition (55) before loading it. Anything else is copied by ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return copy.deepcopy(value)


def _derive(doc: Mapping[str, Any], version: str, name: str, origin: str) -> dict[str, Any]:
    out: dict[str, Any] = _copy(dict(doc))
    out["spec"]["structureDefinition"]["rootComponent"]["kind"]["version"] = version
    meta = out.setdefault("metadata", {})
    meta["name"] = name
    annotations = meta.setdefault("annotations", {})
    annotations.pop(SERVED_VERSIONS_ANNOTATION, None)
    annotations[DERIVED_FROM_ANNOTATION] = origin
    return out


class Catalog:
    """The built-in definitions (or those of any directory of ``<slug>.yaml`` files)."""

    def __init__(self, directory: Traversable | None = None) -> None:
        #: the package's own folder is a ``str`` (no pathlib at start-up), any other a Traversable
        self._directory: Traversable | str | None = directory
        self._lock = _thread.RLock()  # threading.RLock, without importing threading
        self._files: dict[str, Traversable | str] | None = None
        self._docs: dict[str, dict[str, Any]] = {}  # file slug -> parsed document
        self._entries: dict[str, tuple[CatalogEntry, dict[str, Any]]] = {}  # entry name -> doc
        self._by_gvk: dict[tuple[str, str, str], str] = {}
        self._complete = False
        self._bundle_read: tuple[Bundle | None] | None = None

    # -- loading ---------------------------------------------------------------------------
    def _dir(self) -> Traversable | str:
        if self._directory is None:
            here = os.path.join(os.path.dirname(__file__), "data")
            if os.path.isdir(here):  # an installed or checked-out package: no importlib.resources
                self._directory = here  # (it imports zipfile, ~10 ms of every start-up)
            else:
                from importlib import resources

                # this module's package, by name rather than a constant naming it: an import of
                # the package from its own module would be a circle
                package = __name__.rpartition(".")[0]
                self._directory = resources.files(package).joinpath("data")
        return self._directory

    def _file_index(self) -> dict[str, Traversable | str]:
        if self._files is None:
            files: dict[str, Traversable | str] = {}
            directory = self._dir()
            if isinstance(directory, str):
                for name in os.listdir(directory):
                    path = os.path.join(directory, name)
                    if name.endswith(_SUFFIX) and os.path.isfile(path):
                        files[name[: -len(_SUFFIX)]] = path
            else:
                for item in directory.iterdir():
                    if item.is_file() and item.name.endswith(_SUFFIX):
                        files[item.name[: -len(_SUFFIX)]] = item
            self._files = dict(sorted(files.items()))
        return self._files

    def _bundle(self) -> Bundle | None:
        """The generated JSON of the built-in definitions (catalog/bundle.py), if present."""
        if self._bundle_read is None:
            directory = self._dir()
            found = None
            if isinstance(directory, str):  # the package's own files
                found = Bundle.read(os.path.join(directory, BUNDLE_NAME))
            elif isinstance(directory, os.PathLike):  # a directory given (a Path: pathlib is in)
                from pathlib import Path

                if isinstance(directory, Path):
                    found = Bundle.read(directory / BUNDLE_NAME)
            self._bundle_read = (found,)
        return self._bundle_read[0]

    @staticmethod
    def _parse_yaml(text: bytes, source: str) -> Any:
        yaml = import_yaml()
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            return yaml.load(text.decode("utf-8"), Loader=loader)
        except yaml.YAMLError as err:
            raise CatalogError(f"catalog definition {source} is not valid YAML: {err}") from None

    def _load_file(self, stem: str) -> None:
        """Parse one packaged file (once) and register the entries it defines."""
        if stem in self._docs:
            return
        item = self._file_index()[stem]
        source = f"{stem}{_SUFFIX}"
        if isinstance(item, str):
            with open(item, "rb") as file:
                text = file.read()
        else:
            text = item.read_bytes()
        bundle = self._bundle()
        doc = None if bundle is None else bundle.document(stem, text)
        if doc is None:  # not bundled, or edited since: the YAML is the source of truth
            doc = self._parse_yaml(text, source)
        if not isinstance(doc, dict):
            raise CatalogError(f"catalog definition {source} is not a YAML mapping")
        if doc.get("apiVersion") != "run.ai/v1alpha1" or doc.get("kind") != "Karta":
            raise CatalogError(f"catalog definition {source} is not a run.ai/v1alpha1 Karta")
        group, version, kind = _root_gvk(doc, source)
        name = (doc.get("metadata") or {}).get("name")
        expected = slug(group, version, kind)
        if name != expected or stem != expected:
            raise CatalogError(
                f"catalog definition {source}: metadata.name {name!r} and the file name must "
                f"both be the slug of the root GVK, {expected!r}"
            )
        self._docs[stem] = doc
        for v in _served_versions(doc, version, source):
            entry_name = slug(group, v, kind)
            entry = CatalogEntry(entry_name, group, v, kind, source, derived=v != version)
            key = (group, v, kind)
            clash = self._by_gvk.get(key)
            if clash is not None:
                other = self._entries[clash][0].source
                raise CatalogError(
                    f"catalog: duplicate GVK {group}/{v}, Kind={kind} defined by "
                    f"{other!r} and {source!r}"
                )
            body = doc if v == version else _derive(doc, v, entry_name, expected)
            self._by_gvk[key] = entry_name
            self._entries[entry_name] = (entry, body)

    def _load_all(self) -> None:
        with self._lock:
            if self._complete:
                return
            for stem in self._file_index():
                self._load_file(stem)
            self._complete = True

    def _load_prefix(self, group: str, kind: str) -> None:
        """Parse the files that may define ``group``/``kind`` (their names start alike)."""
        prefix = f"{(group or 'core').replace('.', '-')}-{kind.lower()}-"
        with self._lock:
            for stem in self._file_index():
                if stem.startswith(prefix):
                    self._load_file(stem)

    # -- building results ------------------------------------------------------------------
    @staticmethod
    def _karta(body: Mapping[str, Any]) -> Karta:
        return load_karta(_copy(dict(body)))

    def _entry_name(self, group: str, version: str, kind: str) -> str | None:
        key = (group, version, kind)
        with self._lock:
            name = self._by_gvk.get(key)
            if name is None and not self._complete:
                self._load_prefix(group, kind)
                name = self._by_gvk.get(key)
            return name

    # -- public API ------------------------------------------------------------------------
    def get(self, group: str, version: str, kind: str) -> Karta | None:
        """The definition for exactly this GVK, or None."""
        name = self._entry_name(group, version, kind)
        return None if name is None else self._karta(self._entries[name][1])

    def find(self, group: str, kind: str) -> list[Karta]:
        """Every definition of ``group``/``kind``, most stable version first."""
        return [self._karta(self._entries[e.name][1]) for e in self.find_entries(group, kind)]

    def find_entries(self, group: str, kind: str) -> list[CatalogEntry]:
        with self._lock:
            if not self._complete:
                self._load_prefix(group, kind)
            found = [e for e, _ in self._entries.values() if e.group == group and e.kind == kind]
        return sorted(found, key=lambda e: version_priority(e.version))

    def for_api_version(self, api_version: str, kind: str) -> Karta | None:
        """The definition for an object's ``apiVersion`` and ``kind`` (exact), or None."""
        gvk = GVK.from_api_version(api_version, kind)
        return self.get(gvk.group, gvk.version, gvk.kind)

    def resolve(self, api_version: str, kind: str) -> tuple[Karta, bool] | None:
        """The exact definition, else the most stable one of the same group and kind.

        Returns the Karta and whether it matched the version exactly; None when the kind is not
        covered at all.
        """
        exact = self.for_api_version(api_version, kind)
        if exact is not None:
            return exact, True
        others = self.find_entries(*GVK.from_api_version(api_version, kind).group_kind)
        if not others:
            return None
        return self._karta(self._entries[others[0].name][1]), False

    def entries(self) -> list[CatalogEntry]:
        """Every entry (one per exact GVK), sorted by name."""
        self._load_all()
        return sorted((e for e, _ in self._entries.values()), key=lambda e: e.name)

    def entry(self, name: str) -> CatalogEntry | None:
        self._load_all()
        found = self._entries.get(name)
        return None if found is None else found[0]

    def names(self) -> list[str]:
        """Every definition's name (the slug of its GVK), sorted."""
        return [e.name for e in self.entries()]

    def by_name(self, name: str) -> Karta | None:
        """The definition named ``name`` (its slug), or None."""
        self._load_all()
        found = self._entries.get(name)
        return None if found is None else self._karta(found[1])

    def document(self, name: str) -> dict[str, Any] | None:
        """The definition named ``name`` as the plain Karta object (a deep copy), or None."""
        self._load_all()
        found = self._entries.get(name)
        return None if found is None else _copy(found[1])

    def as_cluster_objects(self) -> list[dict[str, Any]]:
        """Every definition as a Karta object ready for ``kubectl apply``.

        Each carries the ``run.ai/karta-group|version|kind`` labels KAI Scheduler (and the Karta
        operator) use to find the definition of a GVK.
        """
        out = []
        for e in self.entries():
            doc = _copy(self._entries[e.name][1])
            meta = doc.setdefault("metadata", {})
            labels = meta.setdefault("labels", {})
            labels.update({GROUP_LABEL: e.group, VERSION_LABEL: e.version, KIND_LABEL: e.kind})
            doc.pop("status", None)
            out.append({"apiVersion": doc.pop("apiVersion"), "kind": doc.pop("kind"), **doc})
        return out

    def __iter__(self) -> Iterator[Karta]:
        return iter(self.list())

    def __len__(self) -> int:
        return len(self.entries())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.entry(name) is not None

    def __repr__(self) -> str:
        return f"<workload_map catalog: {len(self._file_index())} definition files>"

    # Defined last: inside the class body its name shadows the builtin in annotations.
    def list(self) -> list[Karta]:
        """Every definition (one per exact GVK, derived versions included), sorted by name."""
        return [self._karta(self._entries[e.name][1]) for e in self.entries()]
