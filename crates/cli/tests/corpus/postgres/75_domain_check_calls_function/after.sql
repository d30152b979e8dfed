-- A domain whose CHECK calls a function declared in the same file.
CREATE FUNCTION is_code(v text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$SELECT v ~ '^[A-Z]+$'$$;
CREATE DOMAIN code AS text CHECK (is_code(VALUE));
CREATE TABLE items (id bigint PRIMARY KEY, sku code);
