CREATE TABLE docs (id int PRIMARY KEY, body jsonb, tags text[]);
