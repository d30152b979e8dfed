-- Schemas that hold only a domain or only a sequence are still managed (read back, not re-created).
CREATE SCHEMA kinds;
CREATE DOMAIN kinds.code AS text;
CREATE SCHEMA counters;
CREATE SEQUENCE counters.tickets;
