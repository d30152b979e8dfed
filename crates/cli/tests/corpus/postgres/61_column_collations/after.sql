-- pg_dump spells a column collation schema-qualified.
CREATE TABLE words (
    id bigint PRIMARY KEY,
    word text COLLATE pg_catalog."C" NOT NULL,
    sortkey varchar(40),
    tags text[] COLLATE "POSIX",
    code character(3) COLLATE pg_catalog."POSIX"
);
