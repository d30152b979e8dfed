CREATE TABLE docs (id int PRIMARY KEY, body jsonb, tags text[]);
CREATE INDEX docs_body ON docs USING gin (body);
CREATE INDEX docs_id_hash ON docs USING hash (id);
