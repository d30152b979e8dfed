-- Defaults written as people write them; the server stores each in its own form.
CREATE TABLE things (
    id bigint PRIMARY KEY,
    flags bit varying(8) DEFAULT x'1F',
    cost money DEFAULT money '1.50',
    doc jsonb DEFAULT '{}'::jsonb,
    tags integer[] DEFAULT ARRAY[]::int[],
    token uuid DEFAULT '00000000-0000-0000-0000-000000000000'::uuid,
    delta integer DEFAULT -1,
    ratio numeric DEFAULT -1.5,
    created timestamp DEFAULT (now() AT TIME ZONE 'utc'),
    names text[] DEFAULT '{}'
);
