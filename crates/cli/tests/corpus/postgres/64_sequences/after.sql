CREATE SEQUENCE ticket_no START WITH 100 INCREMENT BY 2 CACHE 10;
COMMENT ON SEQUENCE ticket_no IS 'numbers printed on tickets';
CREATE SEQUENCE batch_no AS smallint MINVALUE 0 MAXVALUE 999 CYCLE;
CREATE TABLE ticket (
    id serial PRIMARY KEY,
    number bigint NOT NULL DEFAULT nextval('ticket_no'),
    batch smallint NOT NULL DEFAULT nextval('batch_no')
);
ALTER SEQUENCE batch_no OWNED BY ticket.batch;
