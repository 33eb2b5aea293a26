"""argparse's messages without ``gettext`` where no catalog applies (cli.argparse_import).

The stand-in answers as ``gettext`` would: the message itself when the default catalog directory
does not exist and ``gettext`` is not imported (nothing imported for it), the real module's
answer (a bound domain's translation) when it is imported or the directory exists.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from tests.fresh import fresh_python
from workload_map.cli import argparse_import


def _mo(pairs: dict[str, str]) -> bytes:
    """A GNU message catalog holding ``pairs`` (what msgfmt writes, without a hash table)."""
    keys = sorted(pairs)
    ids = b"".join(k.encode() + b"\0" for k in keys)
    strs = b"".join(pairs[k].encode() + b"\0" for k in keys)
    count = len(keys)
    start = 7 * 4 + 16 * count
    ids_at, strs_at = start, start + len(ids)
    originals, translations, offset, toffset = [], [], 0, 0
    for k in keys:
        originals += [len(k.encode()), ids_at + offset]
        offset += len(k.encode()) + 1
        translations += [len(pairs[k].encode()), strs_at + toffset]
        toffset += len(pairs[k].encode()) + 1
    head = struct.pack("Iiiiiii", 0x950412DE, 0, count, 28, 28 + 8 * count, 0, 0)
    tables = struct.pack(f"{4 * count}i", *originals, *translations)
    return head + tables + ids + strs


def test_no_catalog_directory_answers_the_message_without_gettext(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delitem(sys.modules, "gettext", raising=False)
    monkeypatch.setattr(argparse_import, "LOCALEDIR", str(tmp_path / "absent"))
    assert argparse_import.gettext("usage: ") == "usage: "
    assert argparse_import.ngettext("one %s", "many %s", 1) == "one %s"
    assert argparse_import.ngettext("one %s", "many %s", 2) == "many %s"
    assert "gettext" not in sys.modules


def test_an_imported_gettext_answers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import gettext

    where = tmp_path / "xx" / "LC_MESSAGES"
    where.mkdir(parents=True)
    (where / "messages.mo").write_bytes(_mo({"usage: ": "uso: ", "show this": "muestra"}))
    monkeypatch.setenv("LANGUAGE", "xx")
    monkeypatch.setattr(gettext, "_localedirs", {"messages": str(tmp_path)})
    monkeypatch.setattr(gettext, "_translations", {})
    monkeypatch.setattr(argparse_import, "LOCALEDIR", str(tmp_path / "absent"))
    assert argparse_import.gettext("usage: ") == "uso: "
    assert argparse_import.gettext("other") == "other"
    assert argparse_import.ngettext("a", "b", 2) == "b"


def test_a_catalog_directory_imports_gettext(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delitem(sys.modules, "gettext", raising=False)
    monkeypatch.setattr(argparse_import, "LOCALEDIR", str(tmp_path))
    assert argparse_import.gettext("usage: ") == "usage: "
    assert "gettext" in sys.modules


def test_argparse_binds_the_stand_in_in_a_fresh_process(tmp_path: Path) -> None:
    """A command line's argparse answers through this module; ``gettext`` and ``locale`` are
    imported only where the default catalog directory exists."""
    code = (
        "import sys\n"
        "from workload_map.cli import argparse_import as a\n"
        "import argparse, os\n"
        "assert argparse._ is a.gettext and argparse.ngettext is a.ngettext\n"
        "p = argparse.ArgumentParser(prog='x')\n"
        "p.add_argument('--n', type=int)\n"
        "try:\n"
        "    p.parse_args(['--n', 'q'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(os.path.isdir(a.LOCALEDIR), 'gettext' in sys.modules, 'locale' in sys.modules)\n"
    )
    done = fresh_python(code, home=tmp_path, check=True)
    assert "x: error: argument --n: invalid int value: 'q'" in done.stderr
    exists, gettext_loaded, locale_loaded = done.stdout.split()
    assert gettext_loaded == exists
    if exists == "False":
        assert locale_loaded == "False"
