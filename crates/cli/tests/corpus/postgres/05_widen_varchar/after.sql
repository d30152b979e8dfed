CREATE TABLE items (id bigint PRIMARY KEY, name varchar(100) NOT NULL);
