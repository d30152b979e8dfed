CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE t (id int PRIMARY KEY, m mood);
