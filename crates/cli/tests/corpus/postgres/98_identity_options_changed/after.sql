-- Changed identity options are set in place; options back to the defaults are the defaults.
CREATE TABLE t (
    a integer GENERATED ALWAYS AS IDENTITY (START WITH 20 INCREMENT BY 5),
    b bigint GENERATED ALWAYS AS IDENTITY (CACHE 10),
    c integer GENERATED ALWAYS AS IDENTITY
);
