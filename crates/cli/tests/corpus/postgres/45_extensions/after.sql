CREATE EXTENSION IF NOT EXISTS pgcrypto;
CREATE EXTENSION citext;
CREATE TABLE users (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), email citext NOT NULL);
