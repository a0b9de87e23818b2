-- next_source_id: the first source id no stored source holds
SELECT coalesce(max(source_id), 0) + 1 FROM sources
