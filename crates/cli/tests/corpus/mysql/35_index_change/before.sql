CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL);
CREATE INDEX items_name_idx ON items (name);
