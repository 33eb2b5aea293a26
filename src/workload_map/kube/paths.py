"""pathlib's answers for the few path operations a command makes, as strings.

``pathlib`` (with the ``urllib.parse``, ``ntpath`` and ``fnmatch`` it imports) is millions of
instructions of every command's start-up (docs/cli.md), spent on the kubeconfig files, the
cache folder and the settings file. These functions answer what ``str(Path(...))`` and the
``Path`` methods the callers used answer on POSIX (the only system the I/O layer runs on),
by pathlib's own rules: empty and ``.`` parts dropped, repeated slashes folded, exactly two
leading slashes kept, a later absolute part restarting the path, ``~`` expanded only as a
relative path's first part, and only missing files (not, say, a refused permission) answered
False. ``tests/kube/test_paths.py`` compares them with pathlib on generated paths.
"""

from __future__ import annotations

import os
from errno import EBADF, ELOOP, ENOENT, ENOTDIR
from stat import S_ISDIR, S_ISREG

__all__ = [
    "PathText",
    "exists",
    "expand",
    "home",
    "is_dir",
    "is_file",
    "join",
    "parent",
    "replace_file",
]

#: what the callers accept where they accepted a ``Path``
PathText = str | os.PathLike[str]

#: the errors pathlib's ``exists``/``is_file``/``is_dir`` answer False for (others raise)
_MISSING = (ENOENT, ENOTDIR, EBADF, ELOOP)


def join(*parts: PathText) -> str:
    """``str(Path(*parts))``."""
    names: list[str] = []
    root = ""
    for part in reversed(parts):
        text = os.fspath(part)
        if not isinstance(text, str):  # bytes: refused as pathlib refuses them
            raise TypeError(
                "argument should be a str object or an os.PathLike object returning str, "
                f"not {type(text)!r}"
            )
        if not text:
            continue
        rel = text.lstrip("/")
        if len(rel) < len(text):
            root = "//" if len(text) - len(rel) == 2 else "/"
        names.extend(x for x in reversed(rel.split("/")) if x and x != ".")
        if root:
            break
    names.reverse()
    return root + "/".join(names) or "."


def _split(text: str) -> tuple[str, str]:
    """A joined path's root (``""``, ``/`` or ``//``) and the rest."""
    rel = text.lstrip("/")
    return text[: len(text) - len(rel)], rel


def expand(path: PathText) -> str:
    """``str(Path(path).expanduser())``: raises ``RuntimeError`` when the home folder is
    unknown, as pathlib does."""
    text = join(path)
    if text[:1] != "~":  # absolute, or not starting with ~
        return text
    first, _, rest = text.partition("/")
    homedir = os.path.expanduser(first)
    if homedir[:1] == "~":
        raise RuntimeError("Could not determine home directory.")
    return join(homedir, rest)


def home() -> str:
    """``str(Path.home())``."""
    return expand("~")


def parent(path: PathText) -> str:
    """``str(Path(path).parent)``."""
    root, rel = _split(join(path))
    if rel == ".":
        rel = ""
    return root + rel.rpartition("/")[0] or "."


def _mode(path: PathText) -> int | None:
    """The file's mode, None when pathlib would answer that it does not exist."""
    try:
        return os.stat(join(path)).st_mode
    except OSError as exc:
        if exc.errno not in _MISSING:
            raise
        return None
    except ValueError:  # a NUL in the path
        return None


def exists(path: PathText) -> bool:
    """``Path(path).exists()``."""
    return _mode(path) is not None


def is_file(path: PathText) -> bool:
    """``Path(path).is_file()``."""
    mode = _mode(path)
    return mode is not None and S_ISREG(mode)


def is_dir(path: PathText) -> bool:
    """``Path(path).is_dir()``."""
    mode = _mode(path)
    return mode is not None and S_ISDIR(mode)


def replace_file(target: str, data: bytes, mode: int) -> None:
    """Write ``data`` to ``target`` (a joined path) through a temporary file of this process
    renamed over it, so a concurrent reader sees a whole file or none, making its folder
    (``0o750``) first. Raises ``OSError``, leaving no temporary file behind."""
    folder = parent(target)
    # one temporary name per process (two live processes never share a pid)
    tmp = join(folder, f".{target.rpartition('/')[2]}.{os.getpid()}.tmp")
    try:
        os.makedirs(folder, mode=0o750, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
