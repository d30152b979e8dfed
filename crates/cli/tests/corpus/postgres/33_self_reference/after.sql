CREATE TABLE nodes (id int PRIMARY KEY, parent_id int REFERENCES nodes (id) ON DELETE CASCADE);
