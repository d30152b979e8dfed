CREATE TABLE t (id int PRIMARY KEY, status text DEFAULT 'new', n int DEFAULT -1);
