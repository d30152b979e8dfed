CREATE TABLE events (
    id bigint NOT NULL PRIMARY KEY,
    starts_at datetime(3) NOT NULL DEFAULT '2020-01-01 00:00:00',
    ends_at timestamp(6) NULL DEFAULT '2020-12-31 23:59:59.500',
    local_at datetime DEFAULT '2020-06-01',
    opens time(2) DEFAULT '09:30',
    day date DEFAULT '2020-01-01'
);
