CREATE TABLE nodes (id int NOT NULL PRIMARY KEY, parent_id int, FOREIGN KEY (parent_id) REFERENCES nodes (id) ON DELETE CASCADE);
