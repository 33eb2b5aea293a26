"""kube.paths answers what pathlib answers: the same strings, the same file tests, the same
errors, on generated paths (the callers' messages and cache locations name these strings)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.kube.answers import outcome
from workload_map.kube import paths

#: path text made of the pieces pathlib's rules are about: slashes, dots, ~, names
PIECES = st.sampled_from(
    ["/", "//", "///", ".", "..", "~", "~root", "~nobody-here", "a", "b.c", " "]
)
TEXTS = st.lists(PIECES, max_size=8).map("".join)


@settings(max_examples=500)
@given(st.lists(TEXTS, max_size=4))
def test_join_is_str_of_path(parts: list[str]) -> None:
    assert paths.join(*parts) == str(PurePosixPath(*parts))


@settings(max_examples=500)
@given(TEXTS)
def test_parent_is_str_of_path_parent(text: str) -> None:
    assert paths.parent(text) == str(PurePosixPath(text).parent)


@settings(max_examples=300)
@given(TEXTS, st.sampled_from([None, "", "/home/u/", "//h", "~", "rel/dir"]))
def test_expand_is_str_of_expanduser(text: str, home: str | None) -> None:
    with mock.patch.dict(os.environ):
        if home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = home
        assert outcome(paths.expand, text) == outcome(lambda t: str(Path(t).expanduser()), text)
        assert outcome(paths.home) == outcome(lambda: str(Path.home()))


def test_a_path_like_is_read_as_its_text(tmp_path: Path) -> None:
    assert paths.join(tmp_path, "x") == str(tmp_path / "x")
    assert paths.expand(tmp_path) == str(tmp_path)
    for bad in (b"/x", 3, None):
        ours = outcome(paths.join, bad)
        assert ours == outcome(lambda b: str(PurePosixPath(b)), bad)
        assert ours[0] == "TypeError"


def test_file_tests_answer_as_pathlib(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    names = ["file", "file/", "file/x", "dir", "dir/", "dir/./", "nowhere", "dangling", "loop"]
    for name in [*names, "", ".", "a\0b", "x" * 5000]:
        text = os.path.join(str(tmp_path), name) if name else name
        for ours, theirs in (
            (paths.exists, Path.exists),
            (paths.is_file, Path.is_file),
            (paths.is_dir, Path.is_dir),
        ):
            assert outcome(ours, text) == outcome(theirs, Path(text)), (ours.__name__, name[:20])
    # a name too long is not "missing": pathlib raises, and so do these
    assert outcome(paths.is_file, "x" * 5000)[0] == "OSError"
