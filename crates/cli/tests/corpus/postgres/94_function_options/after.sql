-- Function options as pg_dump writes them: settings, parallel safety, estimates (LEAKPROOF
-- needs a superuser, which the test role is not; tests/routine_options.rs reads it).
CREATE SCHEMA app;
CREATE FUNCTION app.audit_who() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'app', 'pg_temp'
    AS $$ SELECT current_user::text $$;
CREATE FUNCTION app.twice(n integer) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 10
    AS $$ SELECT n * 2 $$;
CREATE FUNCTION app.series(n integer) RETURNS SETOF integer
    LANGUAGE sql PARALLEL RESTRICTED ROWS 5
    SET work_mem TO '8MB'
    SET statement_timeout TO '5s'
    AS $$ SELECT generate_series(1, n) $$;
CREATE PROCEDURE app.tidy()
    LANGUAGE plpgsql
    SET search_path TO "$user", 'public'
    AS $$ BEGIN PERFORM 1; END $$;
