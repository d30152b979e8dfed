-- The trigger's function gets a new body; the trigger itself is unchanged and stays.
CREATE TABLE jobs (id bigint PRIMARY KEY, touched timestamp);
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN NEW.touched := clock_timestamp(); RETURN NEW; END$$;
CREATE TRIGGER jobs_touch BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION touch();
