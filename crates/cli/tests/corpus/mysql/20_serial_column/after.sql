CREATE TABLE t (id SERIAL PRIMARY KEY, name varchar(10));
