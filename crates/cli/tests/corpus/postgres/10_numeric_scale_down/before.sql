CREATE TABLE t (id int PRIMARY KEY, price numeric(12,4));
