CREATE TABLE t (id int NOT NULL PRIMARY KEY, mood enum('sad','ok'));
