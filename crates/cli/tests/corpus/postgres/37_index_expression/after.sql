CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL);
CREATE INDEX items_lower ON items (lower(name));
CREATE INDEX items_mixed ON items (id, (name || '!'));
