-- A procedure and a trigger with DELIMITER, as the mysql client reads them.
CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, body TEXT);

DELIMITER //
CREATE PROCEDURE add_note(IN msg TEXT)
BEGIN
  INSERT INTO notes (body) VALUES (msg);
  INSERT INTO notes (body) VALUES (CONCAT(msg, '; again'));
END //
DELIMITER ;

# a hash comment; with a semicolon
INSERT INTO notes (body) VALUES ('it\'s; escaped'), ("double \"quoted\"; text"), ('doubled ''quote'';');

DELIMITER $$
CREATE TRIGGER notes_bi BEFORE INSERT ON notes FOR EACH ROW
BEGIN
  SET NEW.body = TRIM(NEW.body);
END$$
DELIMITER ;

SELECT body AS `odd;name` FROM notes /* block; comment */;
CALL add_note('hello; world')
