CREATE TABLE t (
  a int, b int, c text, d int, e int,
  KEY ia (a),
  KEY ib (b) USING HASH,
  KEY ie (e) COMMENT 'old'
) ENGINE=InnoDB;
