CREATE TABLE film (film_id int NOT NULL PRIMARY KEY, title varchar(100) NOT NULL, rating varchar(5), length int);
CREATE TABLE actor (actor_id int NOT NULL PRIMARY KEY, name varchar(50) NOT NULL);
CREATE TABLE film_actor (actor_id int NOT NULL, film_id int NOT NULL, PRIMARY KEY (actor_id, film_id));
