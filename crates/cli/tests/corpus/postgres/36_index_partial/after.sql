CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL, deleted boolean NOT NULL DEFAULT false);
CREATE INDEX items_live ON items (name) WHERE NOT deleted;
CREATE INDEX items_long ON items (id) WHERE length(name) > 10 AND name <> 'x';
