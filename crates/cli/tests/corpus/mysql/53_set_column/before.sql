CREATE TABLE film (id int NOT NULL PRIMARY KEY, special_features SET('Trailers','Commentaries') DEFAULT NULL);
