CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL, CONSTRAINT items_name_key UNIQUE (name));
