CREATE TABLE a (id integer PRIMARY KEY, x integer, y integer, UNIQUE (x, y));
CREATE TABLE b (id integer PRIMARY KEY, a_id integer, x integer, y integer);
CREATE TABLE c (id integer PRIMARY KEY, a_id integer);
ALTER TABLE b ADD CONSTRAINT to_a FOREIGN KEY (a_id) REFERENCES a (id);
