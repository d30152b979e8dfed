-- A policy whose expression needs its casts to be valid.
CREATE TABLE notes (id bigint PRIMARY KEY, owner_id bigint NOT NULL);
ALTER TABLE notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY notes_owner ON notes USING (owner_id = current_setting('app.user_id')::bigint);
