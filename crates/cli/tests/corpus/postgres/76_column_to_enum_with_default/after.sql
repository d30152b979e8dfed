-- The column becomes an enum while its default is text: the default goes, the type changes, the
-- default comes back.
CREATE TYPE ticket_state AS ENUM ('open', 'closed');
CREATE TABLE tickets (id bigint PRIMARY KEY, state ticket_state NOT NULL DEFAULT 'open');
