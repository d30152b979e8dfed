-- A trigger's WHEN condition written as people write it.
CREATE TABLE jobs (id bigint PRIMARY KEY, status text, touched timestamp);
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN NEW.touched := now(); RETURN NEW; END$$;
CREATE TRIGGER jobs_touch BEFORE UPDATE ON jobs FOR EACH ROW WHEN (NEW.status IN ('a', 'b')) EXECUTE FUNCTION touch();
