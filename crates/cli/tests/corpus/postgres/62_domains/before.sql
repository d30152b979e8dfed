-- Domains written by hand: an unnamed check takes the server's name, the base type its alias.
CREATE DOMAIN amount AS numeric(12,2) DEFAULT 0 NOT NULL CHECK (VALUE >= 0);
CREATE DOMAIN code AS varchar(8) CONSTRAINT code_upper CHECK (VALUE = upper(VALUE));
CREATE TABLE items (
    id bigint PRIMARY KEY,
    price amount,
    sku code
);
