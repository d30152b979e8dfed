-- Hand-written views (as in sakila-schema.sql), not the server's spelling: the plan learns how
-- the server prints each one, so a second plan is empty instead of re-creating them forever.
CREATE TABLE film (film_id int NOT NULL PRIMARY KEY, title varchar(100) NOT NULL, rating varchar(5), length int);
CREATE TABLE actor (actor_id int NOT NULL PRIMARY KEY, name varchar(50) NOT NULL);
CREATE TABLE film_actor (actor_id int NOT NULL, film_id int NOT NULL, PRIMARY KEY (actor_id, film_id));
CREATE VIEW film_list AS
SELECT f.film_id AS fid, f.title, GROUP_CONCAT(a.name ORDER BY a.name SEPARATOR ', ') AS actors
FROM film f LEFT JOIN film_actor fa ON fa.film_id = f.film_id LEFT JOIN actor a ON a.actor_id = fa.actor_id
GROUP BY f.film_id, f.title;
CREATE VIEW long_films AS SELECT * FROM film_list WHERE fid IN (SELECT film_id FROM film WHERE length > 120);
CREATE ALGORITHM = TEMPTABLE VIEW ranked_films AS
SELECT fid, title, RANK() OVER (ORDER BY title DESC) AS position FROM long_films;
