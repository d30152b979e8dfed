-- The pagila/dvdrental aggregate as pg_dump writes it, used by a view: created after its
-- support function and before the view.
CREATE FUNCTION public._group_concat(text, text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $_$
SELECT CASE
  WHEN $2 IS NULL THEN $1
  WHEN $1 IS NULL THEN $2
  ELSE $1 || ', ' || $2
END
$_$;
CREATE AGGREGATE public.group_concat(text) (
    SFUNC = public._group_concat,
    STYPE = text
);
COMMENT ON AGGREGATE public.group_concat(text) IS 'joins with commas';
CREATE AGGREGATE public.total(integer) (
    SFUNC = int4pl,
    STYPE = integer,
    INITCOND = '0',
    COMBINEFUNC = int4pl,
    PARALLEL = safe
);
CREATE TABLE public.film (
    film_id integer NOT NULL,
    title text NOT NULL,
    length integer
);
CREATE VIEW public.film_titles AS
 SELECT public.group_concat(film.title) AS titles,
    public.total(film.length) AS minutes
   FROM public.film;
