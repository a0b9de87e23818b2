-- The day a source belongs to: its first run's start, else its first timestamped event.
SELECT strftime(coalesce((SELECT min(started_at) FROM runs), (SELECT min(ts) FROM events)), '%Y-%m-%d')
