CREATE TABLE items (id bigint PRIMARY KEY, title varchar(40));
