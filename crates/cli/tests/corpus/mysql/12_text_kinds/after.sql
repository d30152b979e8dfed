CREATE TABLE t (id int NOT NULL PRIMARY KEY, body mediumtext, small tinytext, big longtext);
