"""Log text is shown inert by every command in every format: escape sequences (CSI colours,
OSC 8 hyperlinks, OSC 52 clipboard writes, OSC 0 titles ended by BEL or ESC \\), C1 controls and
bidi overrides never reach the terminal raw, and rich markup inside log text (`[link=...]`,
`[/]`) prints literally instead of becoming a link or crashing the renderer.
"""
from __future__ import annotations

import json

import pytest

from logsleuth.inert import inert, markup_safe, plain_json
from support.cli import run_in_process
from support.paths import SAMPLES

ESC = "\x1b"
HOSTILE_MODEL = ("evil[/]" + ESC + "]8;;https://evil.example/" + ESC + "\\click" + ESC + "]8;;" + ESC + "\\"
                 + "[link=https://x.example]L[/link]" + ESC + "]52;c;cm0gLXJmIH4=\x07" + ESC + "]0;pwned\x07"
                 + ESC + "[31mred\u202eevil\x9b31m")
HOSTILE_LINE = ("[2026-02-03 10:47:00] weird " + ESC + "]0;title" + ESC + "\\ line [/] [bold]b[/bold] "
                "[link=https://evil.example]x[/link] \x9b31m \x07 \u202egnp.exe " + ESC + "[2J")
#: what must never be printed raw
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\x9d")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inert") / "x["  # a '[/]' in the file's path
    folder.mkdir()
    lines = (SAMPLES / "sglang_baseline.log").read_text(encoding="utf-8").splitlines()[:300]
    lines = [ln.replace("moonshotai/Kimi-K2.5", HOSTILE_MODEL) for ln in lines] + [HOSTILE_LINE] * 3
    log = folder / ("]y" + ESC + "]0;name\x07.log")
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = str(folder.parent / "inert.duckdb")
    code, out, err = run_in_process("ingest", str(log), db=db)
    return db, log, code, out, err


def _assert_inert(text: str, what: str) -> None:
    for ch in RAW:
        assert ch not in text, f"{what}: raw {ch!r} printed: {text[:400]!r}"


def test_ingest_of_hostile_names_succeeds_and_prints_inert(hostile):
    db, log, code, out, err = hostile
    assert code == 0, err
    _assert_inert(out + err, "ingest")
    assert "Traceback" not in err


COMMANDS = [
    ("runs",), ("runs", "--format", "json"), ("runs", "--format", "csv"), ("runs", "--format", "markdown"),
    ("show", "1"), ("show", "2"),
    ("diagnose",), ("diagnose", "--format", "json"), ("diagnose", "--format", "markdown"),
    ("unparsed",), ("unparsed", "--format", "json"), ("unparsed", "--format", "csv"),
    ("unparsed", "--format", "markdown"),
    ("sql", "SELECT raw FROM lines"), ("sql", "--format", "csv", "SELECT raw FROM lines"),
    ("sql", "--format", "json", "SELECT raw FROM lines"), ("sql", "--format", "markdown", "SELECT raw FROM lines"),
    ("sql", "SELECT model, path FROM runs JOIN sources USING (source_id)"),
    ("compare",), ("compare", "--format", "json"), ("compare", "--format", "markdown"),
    ("compare", "--format", "csv"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a)[:40] for a in COMMANDS])
def test_every_command_prints_log_text_inert(hostile, args):
    db = hostile[0]
    code, out, err = run_in_process(*args, db=db)
    assert code in (0, 1, 2), (args, code, err)  # 2: `show N` of a run id that does not exist
    assert "Traceback" not in err and "internal error" not in err, err
    _assert_inert(out + err, " ".join(args))


def test_markup_in_log_text_prints_literally(hostile):
    db = hostile[0]
    code, out, err = run_in_process("sql", "SELECT raw FROM lines WHERE raw LIKE '%weird%' LIMIT 1", db=db)
    assert code == 0, err
    assert "[link=https://evil.example]x[/link]" in out and "[/]" in out
    assert "\\x1b]0;title\\x1b\\" in out  # the OSC sequence, made visible
    code, out, err = run_in_process("runs", db=db)
    assert code == 0 and "evil[/]" in out, (out, err)


def test_the_database_keeps_the_bytes(hostile):
    """Inert is a rendering: the stored line is the input line (lossless)."""
    import duckdb

    con = duckdb.connect(hostile[0], read_only=True)
    try:
        raws = [r[0] for r in con.execute("SELECT raw FROM lines WHERE raw LIKE '%weird%'").fetchall()]
    finally:
        con.close()
    # byte for byte, CSI sequences included (the line store is lossless since 2a58350)
    assert raws and all(r == HOSTILE_LINE for r in raws)


# --- the functions ----------------------------------------------------------------------------

@pytest.mark.parametrize("text,shown", [
    ("\x1b[31mred", "red"),  # SGR colour codes are dropped when shown (2a58350): they only colour
    ("\x1b[1;32mok\x1b[0m", "ok"),
    ("\x1b[2Jx", "\\x1b[2Jx"),  # any other CSI (clear screen, cursor moves) is made visible
    ("\x1b]8;;https://e/\x1b\\x\x1b]8;;\x1b\\", "\\x1b]8;;https://e/\\x1b\\x\\x1b]8;;\\x1b\\"),
    ("\x1b]52;c;Zm9v\x07", "\\x1b]52;c;Zm9v\\x07"),
    ("a\rb", "a\\rb"),
    ("\x9b31m", "\\x9b31m"),
    ("\u202eexe.txt", "\\u202eexe.txt"),
    ("tab\tand\nnewline", "tab\tand\nnewline"),
    ("plain [link=x]y[/link] ünïcødé", "plain [link=x]y[/link] ünïcødé"),
])
def test_inert(text, shown):
    assert inert(text) == shown
    assert inert(inert(text)) == inert(text)


def test_markup_safe_renders_literally():
    from rich.console import Console

    console = Console(record=True, width=200, color_system=None)
    shown = markup_safe("[/] [link=https://e]x[/link] \x1b]0;t\x07")
    console.print(f"[bold]{shown}[/]")
    text = console.export_text()
    assert "[/] [link=https://e]x[/link] \\x1b]0;t\\x07" in text


def test_plain_json_has_no_infinity():
    out = plain_json({"a": float("inf"), "b": [float("-inf"), float("nan"), 1.0], "c": (2.5,)})
    assert json.loads(out) == {"a": None, "b": [None, None, 1.0], "c": [2.5]}
