CREATE TABLE notes (id int NOT NULL PRIMARY KEY, title varchar(40) NOT NULL, body text, code char(3) CHARACTER SET latin1 COLLATE latin1_bin) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
