CREATE TABLE t (id int NOT NULL PRIMARY KEY, status varchar(10) DEFAULT 'new');
