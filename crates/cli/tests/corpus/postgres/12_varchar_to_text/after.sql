CREATE TABLE t (id int PRIMARY KEY, body text);
