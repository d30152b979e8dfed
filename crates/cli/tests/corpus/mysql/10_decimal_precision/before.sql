CREATE TABLE t (id int NOT NULL PRIMARY KEY, price decimal(8,2));
