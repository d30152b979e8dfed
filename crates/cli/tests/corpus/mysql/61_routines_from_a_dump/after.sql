CREATE TABLE `film` (
  `film_id` int(10) unsigned NOT NULL AUTO_INCREMENT,
  `title` varchar(100) NOT NULL,
  PRIMARY KEY (`film_id`)
);
/*!50003 DROP FUNCTION IF EXISTS `get_title` */;
DELIMITER ;;
CREATE DEFINER=`root`@`localhost` FUNCTION `get_title`(p_id int) RETURNS varchar(100) CHARSET utf8mb4 COLLATE utf8mb4_general_ci
    READS SQL DATA
    DETERMINISTIC
    SQL SECURITY INVOKER
BEGIN
  DECLARE t VARCHAR(100);
  SELECT title INTO t FROM film WHERE film_id = p_id;
  RETURN t;
END ;;
DELIMITER ;
/*!50003 DROP PROCEDURE IF EXISTS `film_count` */;
DELIMITER ;;
CREATE DEFINER=`root`@`localhost` PROCEDURE `film_count`(IN p_min INT, OUT p_count INT)
    READS SQL DATA
    COMMENT 'films from p_min on'
BEGIN
     SELECT COUNT(*) INTO p_count FROM film WHERE film_id >= p_min;
END ;;
DELIMITER ;
