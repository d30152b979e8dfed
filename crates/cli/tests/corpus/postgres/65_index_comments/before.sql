CREATE TABLE account (id bigint PRIMARY KEY, email text NOT NULL, region text);
CREATE INDEX account_email ON account (lower(email));
COMMENT ON INDEX account_email IS 'login lookups';
CREATE INDEX account_region ON account (region);
COMMENT ON INDEX account_region IS 'reports by region';
