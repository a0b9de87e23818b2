-- Whether the sources carry a host (a dataset's do; a database records none).
SELECT count(*) > 0 FROM information_schema.columns WHERE table_name = 'sources' AND column_name = 'host'
