"""The report's parts on their own: SVG charts from plain series, and HTML rendered from a ReportData
built by hand (no database: only report/data.py reads one)."""
from __future__ import annotations

import ast
import re

import pytest

from logsleuth.analysis.compare import Column, CompareResult, Row
from logsleuth.report.data import ReportData, RunData
from logsleuth.report.html import render
from logsleuth.report.svg import Chart, Series, nice_ticks, reduce_points, timeline_svg
from support.paths import ROOT

REPORT = ROOT / "src" / "logsleuth" / "report"


@pytest.mark.parametrize("module", ["html.py", "svg.py"])
def test_rendering_modules_do_not_read_the_database(module):
    tree = ast.parse((REPORT / module).read_text(encoding="utf-8"))
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m.endswith(("db", "db.queries", "db.connection")) or m == "duckdb" for m in imported), imported
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert not calls & {"execute", "sql", "fetchall", "fetchone"}


def test_empty_chart_says_no_data():
    svg = Chart("t", "x", "y", [Series("a", "#000", [(None, 1), (float("nan"), 2)])]).svg()
    assert "no data" in svg and "<polyline" not in svg


def test_log_axis_ticks_are_powers_of_two_and_drop_non_positive_x():
    svg = Chart("t", "running", "tok/s", [Series("a", "#000", [(0, 5), (1, 10), (3, 20), (100, 30)], mode="scatter")],
                x_log=True).svg()
    ticks = re.findall(r'class="tick">([^<]+)</text>', svg)
    assert {"1", "2", "4", "8", "16", "32", "64", "128"} <= set(ticks)
    assert svg.count("<circle") == 3  # x = 0 has no place on a log axis


def test_a_line_series_draws_a_polyline_and_escapes_its_name():
    svg = Chart("t", "s", "tok/s", [Series("<b>run</b>", "#123456", [(0, 1), (1, 2), (2, 3)], dash="6 3")]).svg()
    assert 'data-name="&lt;b&gt;run&lt;/b&gt;"' in svg
    assert 'stroke="#123456"' in svg and 'stroke-dasharray="6 3"' in svg
    assert len(re.findall(r"\d+\.\d,\d+\.\d", svg)) == 3


def test_long_series_keep_their_extremes():
    pts = [(i, (i * 7919) % 1000) for i in range(10_000)]
    red = reduce_points(pts, limit=200)
    assert len(red) <= 200
    assert max(y for _, y in red) == 999 and min(y for _, y in red) == 0
    assert [x for x, _ in red] == sorted(x for x, _ in red)


def test_nice_ticks_cover_the_range():
    t = nice_ticks(0, 937, 5)
    assert t[0] == 0 and t[-1] >= 937 and len(t) <= 7
    assert len({round(b - a, 6) for a, b in zip(t, t[1:])}) == 1


def test_timeline_bars_per_phase_and_ready_tick():
    tl = {"phases": [{"phase": "weights", "start_s": 0, "end_s": 400}, {"phase": "graph capture", "start_s": 400,
                                                                         "end_s": 500}], "ready_s": 520}
    svg = timeline_svg([("run <1>", tl), ("empty", {"phases": []})])
    assert svg.count('class="phase"') == 2 and 'class="ready"' in svg
    assert "run &lt;1&gt;" in svg and "empty" not in svg
    assert "No startup milestones" in timeline_svg([("x", None)])


def _data(n_runs: int) -> ReportData:
    cols = [Column(run_id=i + 1, name=f"run{i + 1}", source=f"r{i + 1}.log", label=None, engine="sglang",
                   kind="server") for i in range(n_runs)]
    rows = [Row("single_stream_tok_s", "single-stream decode (1 running)", "throughput", "tok/s",
                [60.0 + i for i in range(n_runs)], "higher")]
    result = CompareResult(columns=cols, rows=rows, config=[], bands=[])
    runs = [RunData(run_id=c.run_id, name=c.name, color="#0072B2", dash=None,
                    summary={"source_name": c.source, "engine": "sglang", "model": "<img src=x>"},
                    decode=[{"t": float(t), "running": 1 + t % 4, "queued": 0, "kv": 0.1, "gen": 50.0 + t}
                            for t in range(20)],
                    spec=[], timeline={"phases": [{"phase": "weights", "start_s": 0, "end_s": 10}], "ready_s": 12},
                    errors=[], findings=[]) for c in cols]
    return ReportData(title="t <x>", generated_at="now", version="9.9", compare=result, runs=runs)


def test_render_from_plain_data():
    page = render(_data(2))
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    assert "by logsleuth 9.9" in page and "<title>t &lt;x&gt;</title>" in page
    assert 'id="overlay"' in page and 'id="run-1"' in page and 'id="run-2"' in page
    assert "&lt;img src=x&gt;" in page and "<img" not in page
    assert 'class=best' in page  # 61 tok/s beats 60
    assert 'data-kind="acceptance"' not in page  # no speculative run


def test_one_run_has_no_overlay_section():
    page = render(_data(1))
    assert 'id="overlay"' not in page and 'id="run-1"' in page
