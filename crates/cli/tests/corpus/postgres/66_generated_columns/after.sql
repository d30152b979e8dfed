CREATE TABLE invoice_line (
    id bigint PRIMARY KEY,
    qty integer NOT NULL,
    unit_price numeric(10,2) NOT NULL,
    amount numeric,
    sku text NOT NULL DEFAULT 'none',
    search_key text GENERATED ALWAYS AS (lower(sku) || ':' || id) STORED
);
CREATE INDEX invoice_line_search ON invoice_line (search_key);
