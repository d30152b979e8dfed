-- A table before its schema's CREATE SCHEMA, and one in a schema the document never creates
-- (pg_dump -t writes no CREATE SCHEMA): both schemas are implied and created.
CREATE TABLE billing.invoices (id integer NOT NULL, total numeric);
CREATE TABLE audit.log (id integer NOT NULL, at timestamp with time zone);
CREATE SCHEMA billing;
CREATE OR REPLACE VIEW billing.totals AS
 SELECT sum(invoices.total) AS sum
   FROM billing.invoices;
