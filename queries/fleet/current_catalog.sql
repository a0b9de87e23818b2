-- The name of the connection's database (the catalog a temporary view must name to read the
-- table it shadows).
SELECT current_database()
