CREATE TABLE t (id int PRIMARY KEY, body character varying(200));
