CREATE TABLE tickets (id int NOT NULL PRIMARY KEY, urgent tinyint(1) NOT NULL DEFAULT 0, state varchar(10) NOT NULL);
CREATE TABLE ticket_log (ticket_id int NOT NULL, note varchar(50) NOT NULL);
DELIMITER ;;
/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER `tickets_ai` AFTER INSERT ON `tickets` FOR EACH ROW BEGIN
  IF NEW.urgent THEN
    INSERT INTO ticket_log VALUES (NEW.id, 'urgent');
  END IF;
  INSERT INTO ticket_log VALUES (NEW.id, CONCAT('state ', NEW.state));
END */;;
DELIMITER ;
