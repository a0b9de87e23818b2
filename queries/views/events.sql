-- events: every typed event (milestone, notice, setting, per-request line), the schema's `events`.
-- Stored in two tables of the same columns so that rules stay fast on multi-GB logs:
-- events_bulk holds the events of the per-request lines (HTTP access lines, request logs: the
-- event patterns marked bulk in parsers/*.toml, whose lines go to lines_bulk), 99% of the
-- events of a busy server; events_other everything else, a few thousand rows. A query that
-- wants milestones reads events_other, one that wants access lines events_bulk.
SELECT * FROM events_other
UNION ALL
SELECT * FROM events_bulk
