-- An aggregate written by hand: the argument type as people spell it, options in any order and
-- case; it converges on the catalog's spelling.
create aggregate total(int) (stype = int, sfunc = int4pl, initcond = 0);
