CREATE TABLE items (id bigint PRIMARY KEY, name varchar(10) NOT NULL);
