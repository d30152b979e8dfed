-- Array spellings PostgreSQL keeps as one: no dimensions, no bounds.
CREATE TABLE grids (
    id bigint PRIMARY KEY,
    cells integer[][],
    sized int[3],
    standard int ARRAY,
    bounded integer ARRAY[4],
    words text[][] DEFAULT '{}'
);
