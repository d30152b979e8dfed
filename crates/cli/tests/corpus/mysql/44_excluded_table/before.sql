CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL);
