CREATE TABLE docs (id int NOT NULL PRIMARY KEY, title varchar(500), body text, KEY docs_title (title(20)), KEY docs_body (body(100), id));
