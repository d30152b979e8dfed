CREATE FUNCTION twice(n integer) RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT n * 2 $$;
CREATE FUNCTION who() RETURNS text LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT current_user::text $$;
