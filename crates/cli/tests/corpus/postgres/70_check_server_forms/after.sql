-- CHECK bodies written as people write them; the server stores each in its own form.
CREATE DOMAIN code AS text CHECK (VALUE IN ('p', 'q'));
CREATE TABLE orders (
    id bigint PRIMARY KEY,
    status text NOT NULL CHECK (status IN ('a', 'b')),
    kind text CHECK (kind <> ALL (ARRAY['x', 'y'])),
    qty integer CHECK (qty::numeric > 0.5),
    price numeric CHECK (price BETWEEN 0 AND 100),
    label varchar(10) CHECK (label NOT IN ('none')),
    c code
);
