CREATE TABLE t (id int PRIMARY KEY, status text);
