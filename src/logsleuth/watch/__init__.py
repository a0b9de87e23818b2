"""Live watch: follow growing server logs and say, while it matters, what the server is doing.

One job per module: ``follow`` (files and pipes that grow, rotate, truncate), ``observe``
(new lines -> typed observations, through the ingest's own grammars), ``phases`` (the pure
phase tracker: progress, ETA, stalls, comparisons), ``history`` (earlier runs of the same
model), ``store`` (short write transactions + rules), ``session`` (the loop and exit codes).
No module here imports typer or rich; the CLI is ``cli/watch.py``.
"""
