CREATE TABLE t (id int PRIMARY KEY, body varchar(200));
