CREATE AGGREGATE total(integer) (SFUNC = int4pl, STYPE = integer);
CREATE AGGREGATE gone(integer) (SFUNC = int4pl, STYPE = integer);
