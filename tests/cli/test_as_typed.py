"""The commands as a new user types them: an empty folder, the default database, no ``LOGSLEUTH_*``.

Every other CLI test passes ``--db``; this tier does not. It runs the installed ``logsleuth``
entry point (``python -m logsleuth`` where no console script is on PATH) in a fresh temporary
folder with every ``LOGSLEUTH_*`` variable removed and ``HOME``/``XDG_*`` pointing into that
folder (no user grammars or caches leak in), and checks:

- the mission's three commands: ``logsleuth ingest sglang_tuned_v1.log``, ``logsleuth diagnose``,
  ``logsleuth sql "SELECT ..."`` (and the same SQL piped into ``logsleuth sql``);
- the commands that read runs, on a missing and on an empty database: exit 2, one line on
  stderr naming ``logsleuth ingest FILE``, nothing on stdout, no database file left behind;
- the README's commands as written there (its set-up command and every ``$ logsleuth ...`` line
  of its ``console`` blocks), in order, in a folder holding ``tests/samples`` as in a checkout.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT, SAMPLES

READS_RUNS = ["diagnose", "show", "runs", "compare", "report"]


def _entry_point() -> list[str]:
    script = shutil.which("logsleuth")
    return [script] if script else [sys.executable, "-m", "logsleuth"]


def _clean_env(folder: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGSLEUTH_")}
    env.update(HOME=str(folder / ".home"), XDG_CONFIG_HOME=str(folder / ".config"),
               XDG_CACHE_HOME=str(folder / ".cache"), COLUMNS="200")
    return env


def typed(folder: Path, line: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    """Run ``line`` (``logsleuth ...`` as a shell would split it) in ``folder``."""
    argv = shlex.split(line)
    assert argv[0] == "logsleuth", line
    return subprocess.run(_entry_point() + argv[1:], cwd=folder, env=_clean_env(folder), input=input,
                          capture_output=True, timeout=300)


@pytest.fixture
def empty_folder(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def test_mission_commands_as_typed(empty_folder):
    shutil.copy(SAMPLES / "sglang_tuned_v1.log", empty_folder)
    res = typed(empty_folder, "logsleuth ingest sglang_tuned_v1.log")
    assert res.returncode == 0, res.stderr.decode()
    assert (empty_folder / "logsleuth.duckdb").is_file()
    assert b"sglang_tuned_v1.log" in res.stdout and b"served" in res.stdout

    res = typed(empty_folder, "logsleuth diagnose")
    assert res.returncode == 0, res.stderr.decode()
    assert b"No findings" not in res.stdout
    assert b"moe_untuned_kernel_config" in res.stdout  # the run's real finding, not an empty bill

    res = typed(empty_folder, 'logsleuth sql "SELECT count(*) AS n, min(engine) AS engine FROM runs"')
    assert res.returncode == 0, res.stderr.decode()
    assert re.search(rb"\b1\b", res.stdout) and b"sglang" in res.stdout

    piped = typed(empty_folder, "logsleuth sql --format csv", input=b"SELECT count(*) AS n FROM runs;\n")
    assert piped.returncode == 0, piped.stderr.decode()
    assert piped.stdout.decode().splitlines() == ["n", "1"]

    again = typed(empty_folder, "logsleuth ingest sglang_tuned_v1.log")  # re-ingest: a no-op
    assert again.returncode == 0, again.stderr.decode()
    assert typed(empty_folder, "logsleuth sql --format csv", input=b"SELECT count(*) FROM runs").stdout \
        .decode().splitlines()[1] == "1"


@pytest.mark.parametrize("command", READS_RUNS)
def test_reading_runs_without_a_database_says_so(empty_folder, command):
    res = typed(empty_folder, f"logsleuth {command}")
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stdout == b""
    err = res.stderr.decode()
    assert err.count("\n") == 1 and "no runs" in err and "logsleuth ingest FILE" in err, err
    assert not (empty_folder / "logsleuth.duckdb").exists()  # a read never leaves an empty database behind


@pytest.mark.parametrize("command", READS_RUNS)
def test_reading_runs_from_an_empty_database_says_so(empty_folder, command):
    made = typed(empty_folder, 'logsleuth sql "SELECT 1"')  # opens (and so creates) the default database
    assert made.returncode == 0 and (empty_folder / "logsleuth.duckdb").is_file(), made.stderr
    res = typed(empty_folder, f"logsleuth {command}")
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stdout == b"" and b"no runs in logsleuth.duckdb" in res.stderr


def test_sql_without_sql_on_a_terminal_is_a_usage_error(empty_folder):
    """No argument, no --file and stdin a terminal: nothing to read, so exit 2 with a hint (run in a pty)."""
    pty = pytest.importorskip("pty")
    import select

    pid, fd = pty.fork()
    if pid == 0:  # child: stdin, stdout and stderr are the pty
        os.chdir(empty_folder)
        os.execvpe(_entry_point()[0], _entry_point() + ["sql"], _clean_env(empty_folder))
    out = b""
    while select.select([fd], [], [], 60)[0]:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2, out
    assert b"no SQL given" in out


# --------------------------------------------------------------------------- the README's commands

def readme_commands() -> list[str]:
    """The README's set-up command (after ``pip install ... &&``) and every ``$ logsleuth ...``
    line of its ``console`` blocks, in the order they appear."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out: list[str] = []
    for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M):
        for line in body.splitlines():
            line = line.strip()
            if lang in ("bash", "sh", "shell") and line.startswith("pip install .") and "&& logsleuth " in line:
                out.append(line.split("&&", 1)[1].strip())
            elif lang == "console" and line.startswith("$ logsleuth "):
                out.append(line[2:])
    return out


def test_readme_has_commands_to_try():
    assert readme_commands(), "the README shows no command to run (set-up command, console blocks)"


def test_readme_commands_as_typed(empty_folder):
    (empty_folder / "tests").mkdir()
    shutil.copytree(SAMPLES, empty_folder / "tests" / "samples")  # as in a checkout
    for line in readme_commands():
        line = line.replace("/tmp/", f"{empty_folder}/")  # the README's scratch paths stay in this test
        res = typed(empty_folder, line.split(" #")[0])
        assert res.returncode in (0, 1), f"{line}\nexit {res.returncode}\n{res.stderr.decode()}"
        assert b"Traceback" not in res.stderr and b"internal error" not in res.stderr, line
