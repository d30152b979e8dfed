CREATE TABLE t (id int PRIMARY KEY, price numeric(8,2));
