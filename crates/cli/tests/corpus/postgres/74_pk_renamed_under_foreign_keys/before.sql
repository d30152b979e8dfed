CREATE TABLE parents (id bigint CONSTRAINT parents_pkey PRIMARY KEY);
CREATE TABLE children (id bigint PRIMARY KEY, parent_id bigint REFERENCES parents (id));
