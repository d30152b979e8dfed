-- The referenced key is replaced: the foreign key that depends on it goes first and comes back.
CREATE TABLE parents (id bigint CONSTRAINT parents_pk PRIMARY KEY);
CREATE TABLE children (id bigint PRIMARY KEY, parent_id bigint REFERENCES parents (id));
