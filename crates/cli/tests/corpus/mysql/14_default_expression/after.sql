CREATE TABLE t (id int NOT NULL PRIMARY KEY, at datetime DEFAULT CURRENT_TIMESTAMP, ts timestamp NULL DEFAULT current_timestamp());
