CREATE TABLE t (tenant int NOT NULL, id int NOT NULL, PRIMARY KEY (tenant, id));
