CREATE TABLE words (
    id bigint PRIMARY KEY,
    word text NOT NULL,
    sortkey varchar(40) COLLATE "C",
    tags text[]
);
