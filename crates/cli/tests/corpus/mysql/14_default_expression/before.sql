CREATE TABLE t (id int NOT NULL PRIMARY KEY, at datetime, ts timestamp NULL);
