"""PyYAML, imported without compiling a regular expression that libyaml's loaders never use.

``import yaml`` compiles ``yaml.reader.Reader.NON_PRINTABLE``, a character class spanning the
whole of Unicode, while the module is imported. Python's ``re`` builds that class in pure Python:
it is about 57 million instructions, more than an eighth of a whole ``wlmap describe -f``, and
only the pure-Python ``Reader`` (``yaml.SafeLoader``, a system without libyaml) ever matches it;
the ``CSafeLoader`` every command uses reads through libyaml. :func:`import_yaml` imports PyYAML
with that one pattern deferred: the class attribute is a stand-in that compiles the real
pattern on first use and then replaces itself, so the pure loaders behave exactly as before.

Why not a library: PyYAML has no option for it (the pattern is a class attribute built at
import), and no other YAML package is wanted. How: ``re.compile`` answers from its cache of
compiled patterns before compiling; the stand-in is put there under the pattern's key just for
the import and removed right after. Where that cache is not what this module expects (another
Python), PyYAML is imported plainly, so the worst case is the old cost, never a wrong answer.
Every ``import yaml`` of the package goes through here, so whichever command imports it first
gets the cheap import.
"""

from __future__ import annotations

import re
import sys
from types import ModuleType
from typing import Any

__all__ = ["import_yaml"]

#: yaml.reader.Reader.NON_PRINTABLE, character for character (PyYAML 5.1 through 6.x)
_NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


class _DeferredPattern:
    """Stands for a compiled pattern; compiles it on first use and takes its own place away."""

    __slots__ = ("_owner", "_pattern")

    def __init__(self, pattern: str) -> None:
        self._pattern = pattern
        self._owner: Any = None  # the class whose attribute this is, once known

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(self._pattern)
        if self._owner is not None and self._owner.__dict__.get("NON_PRINTABLE") is self:
            self._owner.NON_PRINTABLE = compiled
        return getattr(compiled, name)


def _pattern_cache() -> dict[Any, Any] | None:
    """The dict ``re.compile`` reads first (3.11: ``_cache``; 3.12+: ``_cache2``), or None."""
    for name in ("_cache2", "_cache"):
        cache = getattr(re, name, None)
        if isinstance(cache, dict):
            return cache
    return None


def import_yaml() -> ModuleType:
    """The ``yaml`` module (imported on the first call, as cheaply as possible)."""
    cache = _pattern_cache()
    key = (str, _NON_PRINTABLE, 0)
    # already imported (or being imported by another thread: the import statement waits for
    # it to finish, where sys.modules would hand out the half-initialised module)
    if "yaml" in sys.modules or cache is None or key in cache:
        import yaml

        return yaml
    stand_in = _DeferredPattern(_NON_PRINTABLE)
    cache[key] = stand_in
    try:
        import yaml
    finally:
        if cache.get(key) is stand_in:
            del cache[key]
    reader = sys.modules.get("yaml.reader")
    owner = getattr(reader, "Reader", None)
    if owner is not None and owner.__dict__.get("NON_PRINTABLE") is stand_in:
        stand_in._owner = owner
    return yaml
