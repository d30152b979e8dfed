CREATE TABLE events (
    id bigint PRIMARY KEY,
    starts_at timestamptz NOT NULL DEFAULT '2020-01-01 00:00:00',
    ends_at timestamp with time zone DEFAULT '2020-12-31T23:59:59.500Z',
    local_at timestamp DEFAULT '2020-06-01',
    opens time DEFAULT '09:30',
    closes time with time zone DEFAULT '17:00:00',
    day date DEFAULT '2020-01-01'
);
