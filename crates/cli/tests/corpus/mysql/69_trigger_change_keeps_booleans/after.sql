CREATE TABLE tickets (id int NOT NULL PRIMARY KEY, urgent tinyint(1) NOT NULL DEFAULT 0, done bool DEFAULT NULL, changed int NOT NULL DEFAULT 0);
DELIMITER ;;
CREATE TRIGGER tickets_bu BEFORE UPDATE ON tickets FOR EACH ROW BEGIN
  SET NEW.changed = OLD.changed + 2;
  IF NEW.done THEN SET NEW.urgent = 0; END IF;
END ;;
DELIMITER ;
