CREATE TABLE invoice_line (
    id bigint PRIMARY KEY,
    qty integer NOT NULL,
    unit_price numeric(10,2) NOT NULL,
    amount numeric GENERATED ALWAYS AS (qty * unit_price) STORED
);
