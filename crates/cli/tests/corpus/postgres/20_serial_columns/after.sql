CREATE TABLE t (id serial PRIMARY KEY, big bigserial, small smallserial);
