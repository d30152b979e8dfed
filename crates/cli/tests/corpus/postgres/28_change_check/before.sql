CREATE TABLE t (id int PRIMARY KEY, qty int CHECK (qty >= 0));
