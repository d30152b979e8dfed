CREATE TABLE t (id int NOT NULL PRIMARY KEY, body text);
