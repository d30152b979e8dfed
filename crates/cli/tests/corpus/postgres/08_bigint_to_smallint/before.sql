CREATE TABLE t (id int PRIMARY KEY, n bigint);
