-- +ptah lock_timeout=5s
-- A function whose body holds semicolons inside dollar quotes with a tag.
CREATE FUNCTION touch_updated_at() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  NEW.updated_at := now(); -- a comment; with a semicolon
  RAISE NOTICE 'touched; %', $$nested;$$;
  RETURN NEW;
END;
$fn$;

CREATE TRIGGER invoices_touch BEFORE UPDATE ON invoices
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

/* a block comment; /* nested; */ still a comment; */
INSERT INTO notes (body) VALUES ('it''s; fine'), (E'escaped \' quote; here'), ($$dollar; body$$);

CREATE FUNCTION add_one(a integer) RETURNS integer LANGUAGE SQL
BEGIN ATOMIC
  SELECT CASE WHEN a > 0 THEN a + 1 ELSE 1 END;
END;

CREATE PROCEDURE log_twice(msg text) LANGUAGE SQL
BEGIN ATOMIC
  INSERT INTO notes (body) VALUES (msg);
  INSERT INTO notes (body) VALUES (msg || ';again');
END;

SELECT "odd;name" FROM "we;ird"
