CREATE TABLE items2 (id bigint PRIMARY KEY, name varchar(40) NOT NULL);
