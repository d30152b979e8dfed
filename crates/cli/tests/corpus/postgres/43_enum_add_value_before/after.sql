CREATE TYPE mood AS ENUM ('awful', 'sad', 'ok');
CREATE TABLE t (id int PRIMARY KEY, m mood);
