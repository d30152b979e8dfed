CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL, created timestamptz);
CREATE INDEX items_name_created ON items (name, created DESC);
