CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL);
