-- PARTITION BY as written by hand; a dump of it (SHOW CREATE TABLE) reads back the same, and so
-- does the catalog (information_schema.PARTITIONS). A changed partitioning is refused (a plan
-- never re-partitions a table).
CREATE TABLE logs (id int NOT NULL, at date NOT NULL, PRIMARY KEY (id, at)) PARTITION BY RANGE (YEAR(at)) (PARTITION p2024 VALUES LESS THAN (2025), PARTITION pmax VALUES LESS THAN MAXVALUE);
CREATE TABLE regions (id int NOT NULL, region varchar(5) NOT NULL) PARTITION BY LIST COLUMNS (region) (PARTITION eu VALUES IN ('de', 'fr'), PARTITION us VALUES IN ('us'));
CREATE TABLE codes (id int NOT NULL, code int NOT NULL) PARTITION BY LIST (code) (PARTITION small VALUES IN (1, 2, 3), PARTITION big VALUES IN (100));
CREATE TABLE hashed (id int NOT NULL PRIMARY KEY) PARTITION BY HASH (id) PARTITIONS 4;
CREATE TABLE keyed (id int NOT NULL PRIMARY KEY, b int) PARTITION BY KEY (id) PARTITIONS 2;
CREATE TABLE ranged_cols (a int NOT NULL, d datetime NOT NULL) PARTITION BY RANGE COLUMNS (a, d) (PARTITION p0 VALUES LESS THAN (10, '2024-01-01 00:00:00'), PARTITION p1 VALUES LESS THAN (MAXVALUE, MAXVALUE));
