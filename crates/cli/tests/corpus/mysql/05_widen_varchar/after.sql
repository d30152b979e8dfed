CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(100) NOT NULL);
