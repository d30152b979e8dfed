-- The default moves, NOT NULL goes, a check is replaced, a new domain and a column of it arrive.
CREATE DOMAIN amount AS numeric(12,2) DEFAULT 1 CHECK (VALUE >= 1);
CREATE DOMAIN code AS character varying(8) CONSTRAINT code_upper CHECK (VALUE = upper(VALUE));
CREATE DOMAIN percent AS smallint CHECK (VALUE BETWEEN 0 AND 100);
COMMENT ON DOMAIN percent IS 'whole percent';
CREATE TABLE items (
    id bigint PRIMARY KEY,
    price amount,
    sku code,
    discount percent
);
