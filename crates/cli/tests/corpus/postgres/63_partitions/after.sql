-- A bound widens (detach, attach), a partition arrives, the plain table is attached, the default
-- partition leaves as a plain table with the key and index the server leaves it, and a column
-- added to the parent reaches its partitions through the server.
CREATE TABLE events (
    id bigint NOT NULL,
    at date NOT NULL,
    kind text,
    source text,
    PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-06-01');
CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE INDEX events_kind_idx ON events (kind);
CREATE TABLE events_old PARTITION OF events FOR VALUES FROM ('2000-01-01') TO ('2024-01-01');
CREATE TABLE events_default (
    id bigint NOT NULL,
    at date NOT NULL,
    kind text,
    source text,
    PRIMARY KEY (id, at)
);
CREATE INDEX ON events_default (kind);
