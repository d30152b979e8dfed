-- A changed initial state drops and creates the aggregate again; one no longer declared goes.
CREATE AGGREGATE total(integer) (SFUNC = int4pl, STYPE = integer, INITCOND = '0');
