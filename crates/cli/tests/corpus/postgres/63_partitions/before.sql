-- Range partitions with a default one, a partitioned index and key, and a plain table beside them.
CREATE TABLE events (
    id bigint NOT NULL,
    at date NOT NULL,
    kind text,
    PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE events_default PARTITION OF events DEFAULT;
CREATE INDEX events_kind_idx ON events (kind);
CREATE TABLE events_old (id bigint NOT NULL, at date NOT NULL, kind text);
