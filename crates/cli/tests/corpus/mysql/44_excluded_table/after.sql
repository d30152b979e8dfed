CREATE TABLE items2 (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL);
