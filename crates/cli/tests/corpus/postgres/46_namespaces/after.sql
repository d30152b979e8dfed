CREATE SCHEMA app;
CREATE TABLE app.accounts (id int PRIMARY KEY);
CREATE TABLE public.audit (id int PRIMARY KEY, account_id int REFERENCES app.accounts (id));
