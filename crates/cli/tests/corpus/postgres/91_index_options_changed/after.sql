-- A changed operator class, INCLUDE list or storage parameter rebuilds the index; the
-- default nulls order spelled out and a reordered WITH list change nothing.
CREATE TABLE items (id bigint PRIMARY KEY, sku text, price numeric);
CREATE INDEX items_sku ON items (sku);
CREATE INDEX items_price ON items (price) INCLUDE (id, sku) WITH (fillfactor = 60);
CREATE INDEX items_kept ON items (sku) WITH (fillfactor = '80');
