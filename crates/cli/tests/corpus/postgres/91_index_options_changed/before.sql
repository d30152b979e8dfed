CREATE TABLE items (id bigint PRIMARY KEY, sku text, price numeric);
CREATE INDEX items_sku ON items (sku text_pattern_ops);
CREATE INDEX items_price ON items (price) INCLUDE (id) WITH (fillfactor = 70);
CREATE INDEX items_kept ON items (sku ASC NULLS LAST) WITH (fillfactor = 80);
