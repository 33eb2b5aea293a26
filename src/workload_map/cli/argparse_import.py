"""argparse, imported without ``gettext`` and ``locale`` where no message catalog can apply.

argparse binds ``gettext.gettext`` and ``ngettext`` when it is imported and passes every message
through them (the group titles and the ``--help`` line while a parser is built, ``usage:``, the
errors). Importing ``gettext`` compiles its plural-forms pattern, and its first lookup imports
``locale`` (its alias tables) to expand the language names, to learn that there is no catalog:
about 8M instructions of a live ``wlmap get``'s 350M (callgrind, docs/cli.md), for messages that
come back unchanged. A translation is only ever found under ``gettext``'s default directory
(``sys.base_prefix/share/locale``) unless a program binds another one, which needs ``gettext``
imported.

So while argparse imports, ``gettext`` is a stand-in whose two functions answer as ``gettext``
would: the real module's answer when it is imported (whoever imported it may have bound a domain
or a directory), else the message itself when the default directory does not exist (``gettext``
then finds no catalog for any language, and its ``dgettext``/``dngettext`` return the message, or
``msgid1`` when ``n == 1``), else the real module's, imported then. The stand-in leaves
``sys.modules`` right after, so any later ``import gettext`` is the real module.
"""

from __future__ import annotations

import os
import sys
import types

__all__ = ["argparse", "gettext", "ngettext"]

#: where ``gettext`` looks for catalogs when no directory is bound (its ``_default_localedir``)
LOCALEDIR = os.path.join(sys.base_prefix, "share", "locale")


def _real() -> types.ModuleType | None:
    """The ``gettext`` module to answer from, or None when no catalog can be found."""
    module = sys.modules.get("gettext")
    if module is None or module is _STAND_IN:
        if not os.path.isdir(LOCALEDIR):
            return None
        import gettext as module
    return module


def gettext(message: str) -> str:
    """``gettext.gettext``: the message's translation, the message itself when there is none."""
    real = _real()
    return message if real is None else str(real.gettext(message))


def ngettext(msgid1: str, msgid2: str, n: int) -> str:
    """``gettext.ngettext``: ``msgid1``'s translation for ``n``, else ``msgid1`` when ``n == 1``
    and ``msgid2`` otherwise."""
    real = _real()
    if real is None:
        return msgid1 if n == 1 else msgid2
    return str(real.ngettext(msgid1, msgid2, n))


_STAND_IN = types.ModuleType("gettext", "argparse's gettext while it imports")
_STAND_IN.gettext = gettext  # type: ignore[attr-defined]
_STAND_IN.ngettext = ngettext  # type: ignore[attr-defined]

if "argparse" not in sys.modules and "gettext" not in sys.modules:
    sys.modules["gettext"] = _STAND_IN
    try:
        import argparse
    finally:
        if sys.modules.get("gettext") is _STAND_IN:
            del sys.modules["gettext"]
else:
    import argparse
