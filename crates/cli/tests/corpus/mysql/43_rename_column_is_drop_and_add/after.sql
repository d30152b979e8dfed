CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, title varchar(40));
