CREATE TABLE t (a int, b int);
/*!50001 CREATE ALGORITHM=MERGE */
/*!50013 DEFINER=`root`@`localhost` SQL SECURITY INVOKER */
/*!50001 VIEW `v` AS select `t`.`a` AS `a`,`t`.`b` AS `b` from `t` where `t`.`a` > 0 */
/*!50002 WITH CASCADED CHECK OPTION */;
CREATE VIEW w AS select `v`.`a` AS `a` from `v` WITH LOCAL CHECK OPTION;
CREATE ALGORITHM=TEMPTABLE VIEW x AS select `v`.`a` AS `a`,row_number() over ( order by `v`.`b`) AS `n` from `v`;
