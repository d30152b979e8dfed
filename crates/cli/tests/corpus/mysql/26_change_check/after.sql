CREATE TABLE t (id int NOT NULL PRIMARY KEY, qty int, CONSTRAINT qty_ok CHECK (qty >= 0 AND qty < 1000));
