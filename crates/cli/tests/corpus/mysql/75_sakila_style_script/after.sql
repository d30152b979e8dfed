-- Shaped like sakila-schema.sql (written here): session settings, the DROP/CREATE SCHEMA + USE
-- preamble for its own database, ON UPDATE columns, a hand-written view, a BEGIN…END trigger,
-- and routines in DELIMITER // and $$ blocks with LANGUAGE SQL, NOT DETERMINISTIC, SQL SECURITY
-- DEFINER, COMMENT and a labelled body. Planned onto a database of another name.
SET NAMES utf8mb4;
SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0;
SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0;
SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='TRADITIONAL';

DROP SCHEMA IF EXISTS sakila;
CREATE SCHEMA sakila;
USE sakila;

CREATE TABLE actor (
  actor_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  first_name VARCHAR(45) NOT NULL,
  last_name VARCHAR(45) NOT NULL,
  last_update TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY  (actor_id),
  KEY idx_actor_last_name (last_name)
)ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE film_text (
  film_id SMALLINT NOT NULL,
  title VARCHAR(255) NOT NULL,
  description TEXT,
  PRIMARY KEY  (film_id),
  FULLTEXT KEY idx_title_description (title,description)
)ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE VIEW actor_names
AS
SELECT a.actor_id, CONCAT(a.first_name, ' ', a.last_name) AS name
FROM actor a;

DELIMITER ;;
CREATE TRIGGER `ins_actor` AFTER INSERT ON `actor` FOR EACH ROW BEGIN
    INSERT INTO film_text (film_id, title, description)
        VALUES (new.actor_id, new.first_name, new.last_name);
  END;;
DELIMITER ;

DELIMITER //
CREATE PROCEDURE rewards_report (
    IN min_monthly_purchases TINYINT UNSIGNED
    , IN min_dollar_amount_purchased DECIMAL(10,2)
    , OUT count_rewardees INT
)
LANGUAGE SQL
NOT DETERMINISTIC
READS SQL DATA
SQL SECURITY DEFINER
COMMENT 'Provides a customizable report on best customers'
proc: BEGIN
    IF min_monthly_purchases = 0 THEN
        SELECT 'Minimum monthly purchases parameter must be > 0';
        LEAVE proc;
    END IF;
    SET count_rewardees = 0;
END //
DELIMITER ;

DELIMITER $$
CREATE FUNCTION get_actor_name(p_actor_id INT) RETURNS VARCHAR(100)
DETERMINISTIC
READS SQL DATA
BEGIN
  DECLARE v VARCHAR(100);
  SELECT CONCAT(first_name, ' ', last_name) INTO v FROM actor WHERE actor_id = p_actor_id;
  RETURN v;
END $$
DELIMITER ;

SET SQL_MODE=@OLD_SQL_MODE;
SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS;
SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS;
