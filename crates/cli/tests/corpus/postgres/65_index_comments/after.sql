CREATE TABLE account (id bigint PRIMARY KEY, email text NOT NULL, region text);
CREATE INDEX account_email ON account (lower(email));
COMMENT ON INDEX account_email IS 'login and password-reset lookups';
CREATE INDEX account_region ON account (region);
CREATE TABLE audit (id bigint PRIMARY KEY, account_id bigint, at timestamptz NOT NULL);
CREATE INDEX audit_at ON audit (at);
COMMENT ON INDEX audit_at IS 'retention sweeps';
