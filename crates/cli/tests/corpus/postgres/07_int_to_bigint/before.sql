CREATE TABLE t (id int PRIMARY KEY, n int4);
