CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL, mood mood DEFAULT 'ok');
