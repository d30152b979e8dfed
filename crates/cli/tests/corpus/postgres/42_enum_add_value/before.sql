CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE TABLE t (id int PRIMARY KEY, m mood);
