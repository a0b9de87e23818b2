-- How many runs the database (or dataset) holds: commands that read runs refuse an empty one.
SELECT count(*) AS n FROM runs
