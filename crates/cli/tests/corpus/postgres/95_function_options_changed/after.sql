-- New options replace the function in place; a setting gone is gone from the catalog too.
CREATE FUNCTION twice(n integer) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE COST 5
    AS $$ SELECT n * 2 $$;
CREATE FUNCTION who() RETURNS text LANGUAGE sql SECURITY DEFINER
    AS $$ SELECT current_user::text $$;
