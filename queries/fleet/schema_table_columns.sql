-- The columns of one table of the schema ($t), in order, with their types (fleet/views.py: a
-- part file written by an earlier logsleuth lacks the newer ones; they read NULL).
SELECT column_name, data_type FROM information_schema.columns
WHERE table_name = $t ORDER BY ordinal_position
