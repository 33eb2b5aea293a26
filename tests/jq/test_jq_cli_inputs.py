"""`wlmap jq` input handling checked against gojq v0.12.18: `input_filename`, missing files,
bytes that are not UTF-8 (in files and arguments), `stderr`, and the integer `-0`."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from workload_map.cli.jq_cli import main
from workload_map.jq.builtins.control import INPUT_FILENAME


def run(args: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", newline="")  # strict, like a real stdout
    err = io.StringIO()
    code = main(args, io.BytesIO(stdin), out, err)
    out.flush()
    return code, raw.getvalue().decode("utf-8"), err.getvalue()


def test_input_filename_names_the_file_of_each_input(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text('{"x":1} 2')
    b.write_text("3")
    code, out, _ = run(["-c", "[input_filename, .]", str(a), str(b)])
    assert code == 0
    assert out.splitlines() == [
        f'["{a}",{{"x":1}}]',
        f'["{a}",2]',
        f'["{b}",3]',
    ]
    assert run(["input_filename", str(a), "-"], b"4")[1].splitlines()[-1] == '"<stdin>"'
    assert INPUT_FILENAME.get() is None  # reset after the run


def test_input_filename_of_stdin_null_input_and_slurp(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    a.write_text("1")
    # gojq v0.12.18 names standard input `<stdin>`, slurped or not
    assert run(["input_filename"], b"1 2")[1] == '"<stdin>"\n"<stdin>"\n'
    assert run(["-s", "input_filename"], b"1 2")[1] == '"<stdin>"\n'
    assert run(["-R", "input_filename"], b"x")[1] == '"<stdin>"\n'
    assert run(["-n", "input_filename"], b"1")[1] == "null\n"
    assert run(["-n", "input_filename", str(a)])[1] == "null\n"
    assert run(["-s", "input_filename", str(a)])[1] == "null\n"
    assert run(["-R", "input_filename", str(a)])[1] == f'"{a}"\n'


def test_missing_input_file_is_reported_and_the_rest_still_run(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    a.write_text("1")
    code, out, err = run([".", str(tmp_path / "none.json"), str(a)])
    assert code == 5
    assert out == "1\n"
    assert err == f"wlmap: open {tmp_path / 'none.json'}: no such file or directory\n"


def test_invalid_utf8_becomes_replacement_characters_and_raw_output_never_fails() -> None:
    code, out, err = run(["-r", "@base64d"], b'"/w=="')
    assert (code, out, err) == (0, "\ufffd\n", "")
    code, out, _ = run(["-c", '@base64d | [test("a"), utf8bytelength, explode]'], b'"/w=="')
    assert (code, out) == (0, "[false,3,[65533]]\n")
    code, out, _ = run(["-c", "explode"], b'"a\xffb"')
    assert (code, out) == (0, "[97,65533,98]\n")


def test_arguments_with_undecodable_bytes_read_as_replacement() -> None:
    # sys.argv keeps undecodable bytes as lone surrogates (surrogateescape)
    code, out, _ = run(["-rn", "--arg", "x", "a\udcff", "$x, ($x | explode | tojson)"])
    assert (code, out) == (0, "a\ufffd\n[97,65533]\n")
    code, out, _ = run(["-rn", '"a\udcff"'])
    assert (code, out) == (0, "a\ufffd\n")
    code, out, _ = run(["-cn", "$ARGS.positional", "--args", "\udcff"])
    assert (code, out) == (0, '["\ufffd"]\n')


def test_stderr_writes_strings_raw_and_other_values_as_compact_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["-nc", '"a\\nb", {"a":1} | stderr'])
    assert code == 0
    assert capsys.readouterr().err == 'a\nb{"a":1}'
    assert out == '"a\\nb"\n{"a":1}\n'


def test_integer_minus_zero_from_input_prints_zero_after_arithmetic() -> None:
    assert run(["-c", ". , . * 1, . / 1, floor"], b"-0")[1] == "-0\n0\n0\n-0\n"
    assert run(["-c", "[.[] * 1]"], b"[-0, -0.0]")[1] == "[0,-0]\n"


def test_text_stdin_with_escaped_bytes_reads_them_as_replacement() -> None:
    out, err = io.StringIO(), io.StringIO()
    # a text stream opened with errors="surrogateescape" hands over bad bytes as surrogates
    assert main(["-c", "explode"], io.StringIO('"a\udcff"'), out, err) == 0
    assert out.getvalue() == "[97,65533]\n"
    out = io.StringIO()
    assert main(["-cR", "."], io.StringIO("\udcffb\n"), out, err) == 0
    assert out.getvalue() == '"\ufffdb"\n'  # the character itself, not an escaped surrogate


class _Interrupted(io.BytesIO):
    def read(self, size: int | None = -1) -> bytes:
        raise KeyboardInterrupt


def test_ctrl_c_exits_without_a_traceback() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["."], _Interrupted(), out, err) == 130
    assert out.getvalue() == "" and err.getvalue() == ""


@pytest.mark.parametrize(("depth", "ok"), [(10_000, True), (10_001, False)])
def test_deep_json_input(depth: int, ok: bool) -> None:
    code, out, err = run(["-c", "[paths] | length"], b"[" * depth + b"]" * depth)
    if ok:
        assert (code, out, err) == (0, f"{depth - 1}\n", "")
    else:
        assert code == 2 or code == 5
        assert "exceeded max depth" in err and "RecursionError" not in err
