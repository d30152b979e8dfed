CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(10) NOT NULL);
