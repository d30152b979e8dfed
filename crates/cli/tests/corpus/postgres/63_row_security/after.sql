-- Forced on the owner too; one policy altered in place, one rebuilt (its command changes), one
-- dropped, one added; the grant loses INSERT and gains UPDATE.
CREATE TABLE notes (
    id bigint PRIMARY KEY,
    author text NOT NULL,
    body text,
    shared boolean NOT NULL DEFAULT false
);
ALTER TABLE notes ENABLE ROW LEVEL SECURITY;
ALTER TABLE notes FORCE ROW LEVEL SECURITY;
CREATE POLICY own ON notes USING (author = CURRENT_USER) WITH CHECK (body IS NOT NULL);
CREATE POLICY shared_read ON notes FOR UPDATE USING (shared);
CREATE POLICY no_empty ON notes AS RESTRICTIVE FOR INSERT WITH CHECK (length(body) > 0);
GRANT SELECT, UPDATE ON notes TO PUBLIC;
