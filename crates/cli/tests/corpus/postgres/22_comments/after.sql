CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL);
COMMENT ON TABLE items IS 'the catalog';
COMMENT ON COLUMN items.name IS 'display name, it''s shown';
