CREATE SEQUENCE ticket_no START WITH 100;
CREATE TABLE ticket (
    id serial PRIMARY KEY,
    number bigint NOT NULL DEFAULT nextval('ticket_no')
);
