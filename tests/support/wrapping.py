"""Wrapped and notebook-embedded copies of a log, and the facts a copy must share with it.

``WRAPPERS`` prefix every line as a capturing program does (each gets the line's index);
``notebook(lines)`` embeds the lines as a Jupyter notebook's stream output (with the launch
cell's source), returning the text and the notebook line number of every log line;
``facts(db, path, to_bare)`` ingests one file into a new database and returns what the
metamorphic tests compare: runs (engine, end state, model, ready, first/last line), typed
row counts, fatal errors and findings, line numbers mapped back to the bare log's.
"""
from __future__ import annotations

import json

import logsleuth
from support.db import source_id, typed_row_counts


def _clock(i: int) -> str:
    s = 36000 + i * 7
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


WRAPPERS = {
    "kaggle_viewer": lambda i: f"{12.5 + i * 0.1:.1f}s {i + 1} ",
    "docker_compose": lambda i: "sglang-router-1  | " if i % 3 else "worker-1         | ",
    "kubectl_prefix": lambda i: "[pod/vllm-7d9f8c6b5-x2k4q/vllm] ",
    "journald_short": lambda i: f"May 01 {_clock(i)} gpu-node-3 python3[41235]: ",
    "harness_level": lambda i: f"2025-05-01 {_clock(i)},{i % 1000:03d} {'ℹ️ INFO' if i % 5 else '⚠️ WARNING'}  ",
    "procfile_column": lambda i: f"{_clock(i)} server.1  | ",
}


def wrap(lines: list[str], prefix) -> str:
    return "".join(prefix(i) + ln + "\n" for i, ln in enumerate(lines))


def notebook(lines: list[str], command: str | None) -> tuple[str, dict[int, int]]:
    """(notebook JSON text, notebook line -> bare line) of ``lines`` as one stderr output."""
    head = ['{', ' "cells": [', '  {', '   "cell_type": "markdown",', '   "metadata": {},', '   "source": [',
            '    "# Launch the server (python -m sglang.launch_server is run below)"', '   ]', '  },',
            '  {', '   "cell_type": "code",', '   "execution_count": 1,', '   "metadata": {},', '   "outputs": [',
            '    {', '     "name": "stderr",', '     "output_type": "stream",', '     "text": [']
    body = [f'      {json.dumps(ln + chr(10) if k < len(lines) - 1 else ln)}{"," if k < len(lines) - 1 else ""}'
            for k, ln in enumerate(lines)]
    tail = ['     ]', '    }', '   ],', '   "source": [']
    if command:
        tail.append(f'    {json.dumps("!" + command)}')
    tail += ['   ]', '  }', ' ],', ' "metadata": {},', ' "nbformat": 4,', ' "nbformat_minor": 5', '}']
    to_bare = {len(head) + k + 1: k + 1 for k in range(len(lines))}
    return "\n".join(head + body + tail) + "\n", to_bare


def facts(db: str, path: str, to_bare: dict[int, int] | None = None, lines: bool = True) -> dict:
    con = logsleuth.open_db(db)
    try:
        logsleuth.ingest_files(con, [path])
        sid = source_id(con, path.rsplit("/", 1)[-1])
        m = (lambda n: n) if to_bare is None else (lambda n: to_bare.get(n) if n is not None else None)
        runs = con.execute("""SELECT run_id, engine, end_state, model, ready, first_line, last_line FROM runs
                              WHERE source_id = ? ORDER BY ordinal""", [sid]).fetchall()
        ordinal = {r[0]: k for k, r in enumerate(runs)}
        run_facts = [r[1:5] + ((m(r[5]), m(r[6])) if lines else ()) for r in runs]
        fatal = sorted((str(k), m(n) or 0) for k, n in con.execute(
            "SELECT kind, line_no FROM errors WHERE source_id = ? AND fatal", [sid]).fetchall())
        counts = typed_row_counts(con, sid) + con.execute(
            "SELECT (SELECT count(*) FROM events WHERE source_id = $1), (SELECT count(*) FROM config"
            " WHERE run_id IN (SELECT run_id FROM runs WHERE source_id = $1))", [sid]).fetchone()
        findings = sorted(((f.rule_id, ordinal.get(f.run_id), m(f.line_no)) for f in logsleuth.diagnose(con)),
                          key=lambda t: tuple((x is None, x if x is not None else 0) for x in t))
        return {"runs": run_facts, "counts": counts, "fatal": fatal, "findings": findings}
    finally:
        con.close()
