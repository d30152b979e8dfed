CREATE TABLE t (id int NOT NULL PRIMARY KEY, n bigint);
