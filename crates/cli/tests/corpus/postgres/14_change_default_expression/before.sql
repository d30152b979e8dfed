CREATE TABLE t (id int PRIMARY KEY, at timestamptz DEFAULT now(), d date);
