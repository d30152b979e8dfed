CREATE TABLE docs (id int NOT NULL PRIMARY KEY, title varchar(500), body text);
