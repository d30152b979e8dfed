CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, code varchar(40) NOT NULL, CONSTRAINT items_code_key UNIQUE (code));
