CREATE TABLE t (id int NOT NULL PRIMARY KEY, email varchar(100));
