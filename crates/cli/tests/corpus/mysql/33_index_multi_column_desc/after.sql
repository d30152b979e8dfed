CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL, created datetime, KEY items_name_created (name, created DESC));
