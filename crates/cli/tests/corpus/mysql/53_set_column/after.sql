CREATE TABLE film (id int NOT NULL PRIMARY KEY, special_features SET('Trailers','Commentaries','Director''s Cut','Behind the Scenes') DEFAULT 'Trailers,Commentaries');
