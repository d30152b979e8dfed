CREATE TABLE t (a int);
CREATE VIEW v AS select `t`.`a` AS `a` from `t`;
