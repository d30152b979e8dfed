CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL);
CREATE UNIQUE INDEX items_name_uq ON items (name);
