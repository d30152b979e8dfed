CREATE TABLE t (id int PRIMARY KEY, email text);
