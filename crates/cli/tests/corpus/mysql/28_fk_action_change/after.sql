CREATE TABLE parents (tenant int NOT NULL, id int NOT NULL, PRIMARY KEY (tenant, id));
CREATE TABLE children (id int NOT NULL PRIMARY KEY, tenant int, parent_id int, CONSTRAINT children_parent_fk FOREIGN KEY (tenant, parent_id) REFERENCES parents (tenant, id) ON DELETE CASCADE);
