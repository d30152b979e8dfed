-- A trigger comment as pg_dump writes it: one COMMENT ON TRIGGER, the trigger kept.
CREATE TABLE public.jobs (id integer NOT NULL, touched timestamp with time zone);
CREATE FUNCTION public.stamp() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN NEW.touched := now(); RETURN NEW; END $$;
CREATE TRIGGER jobs_stamp BEFORE UPDATE ON public.jobs FOR EACH ROW EXECUTE FUNCTION public.stamp();
COMMENT ON TRIGGER jobs_stamp ON public.jobs IS 'keeps touched current';
