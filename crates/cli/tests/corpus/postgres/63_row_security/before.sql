-- Row-level security written by hand: policies for every role and a grant to PUBLIC (roles are
-- cluster-wide and out of scope, so the corpus names none).
CREATE TABLE notes (
    id bigint PRIMARY KEY,
    author text NOT NULL,
    body text,
    shared boolean NOT NULL DEFAULT false
);
ALTER TABLE notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON notes USING (author = CURRENT_USER);
CREATE POLICY shared_read ON notes FOR SELECT USING (shared);
CREATE POLICY gone ON notes FOR DELETE USING (author = CURRENT_USER);
GRANT SELECT, INSERT ON notes TO PUBLIC;
