-- As mysqldump writes keys: `USING BTREE` is the default, `USING HASH` on a plain InnoDB key is
-- a B-tree (the catalog says so), on a UNIQUE key over a long column a hash-based unique index (on a short one MariaDB makes a B-tree of it at the next table rebuild); a comment is part of
-- the index, so changing one rebuilds the index in one ALTER TABLE.
CREATE TABLE t (
  a int, b int, c text, d int, e int,
  UNIQUE KEY uc (c) USING HASH,
  UNIQUE KEY ud (d) COMMENT 'one per d',
  KEY ia (a) USING BTREE COMMENT 'aye',
  KEY ib (b) USING HASH,
  KEY ie (e) USING BTREE
) ENGINE=InnoDB;
