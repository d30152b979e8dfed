CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, code varchar(40) NOT NULL);
CREATE INDEX items_code_key ON items (code(10));
