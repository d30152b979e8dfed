-- Expression and partial indexes written as people write them.
CREATE TABLE users (id bigint PRIMARY KEY, email text, status text, score numeric, n integer);
CREATE INDEX users_email_lower ON users (lower(email));
CREATE INDEX users_active ON users (id) WHERE status IN ('a', 'b');
CREATE INDEX users_high ON users (id) WHERE score > 1.5;
CREATE INDEX users_neg ON users (n) WHERE n > -1 AND email IS NOT NULL;
