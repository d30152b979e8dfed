CREATE TABLE t (name text PRIMARY KEY, seq bigserial);
