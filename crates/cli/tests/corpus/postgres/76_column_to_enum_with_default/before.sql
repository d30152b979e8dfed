CREATE TABLE tickets (id bigint PRIMARY KEY, state text NOT NULL DEFAULT 'open');
