CREATE SCHEMA kinds;
CREATE DOMAIN kinds.code AS text;
