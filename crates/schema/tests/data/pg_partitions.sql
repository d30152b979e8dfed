--
-- PostgreSQL database dump
--

\restrict wKeg0ALcROvliireUO5OjDlxjUD6hNxCyxrLWau61c7tAfgtORdIv23P0QASNbR

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: app; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app;


SET default_tablespace = '';

--
-- Name: events; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.events (
    id bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    kind text,
    payload jsonb
)
PARTITION BY RANGE (created_at);


--
-- Name: TABLE events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.events IS 'all events';


--
-- Name: COLUMN events.kind; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.events.kind IS 'what happened';


SET default_table_access_method = heap;

--
-- Name: events_2024; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.events_2024 (
    id bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    kind text,
    payload jsonb
);


--
-- Name: events_2025; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.events_2025 (
    id bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    kind text,
    payload jsonb
);


--
-- Name: events_default; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.events_default (
    id bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    kind text,
    payload jsonb
);


--
-- Name: TABLE events_default; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.events_default IS 'anything else';


--
-- Name: orders; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.orders (
    id integer NOT NULL,
    region text NOT NULL,
    user_id integer,
    CONSTRAINT orders_id_check CHECK ((id > 0))
)
PARTITION BY LIST (region);


--
-- Name: orders_eu; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.orders_eu (
    id integer NOT NULL,
    region text NOT NULL,
    user_id integer,
    CONSTRAINT orders_id_check CHECK ((id > 0))
);


--
-- Name: orders_us; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.orders_us (
    id integer NOT NULL,
    region text NOT NULL,
    user_id integer,
    CONSTRAINT orders_id_check CHECK ((id > 0)),
    CONSTRAINT orders_us_id_small CHECK ((id < 1000000))
);


--
-- Name: sessions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.sessions (
    id integer NOT NULL,
    token text
)
PARTITION BY HASH (id);


--
-- Name: sessions_0; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.sessions_0 (
    id integer NOT NULL,
    token text
);


--
-- Name: sessions_1; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.sessions_1 (
    id integer NOT NULL,
    token text
);


--
-- Name: users; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.users (
    id integer NOT NULL
);


--
-- Name: events_2024; Type: TABLE ATTACH; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events ATTACH PARTITION app.events_2024 FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2025-01-01 00:00:00+00');


--
-- Name: events_2025; Type: TABLE ATTACH; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events ATTACH PARTITION app.events_2025 FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2026-01-01 00:00:00+00');


--
-- Name: events_default; Type: TABLE ATTACH; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events ATTACH PARTITION app.events_default DEFAULT;


--
-- Name: orders_eu; Type: TABLE ATTACH; Schema: app; Owner: -
--

ALTER TABLE ONLY app.orders ATTACH PARTITION app.orders_eu FOR VALUES IN ('de', 'fr');


--
-- Name: orders_us; Type: TABLE ATTACH; Schema: app; Owner: -
--

ALTER TABLE ONLY app.orders ATTACH PARTITION app.orders_us FOR VALUES IN ('us');


--
-- Name: sessions_0; Type: TABLE ATTACH; Schema: app; Owner: -
--

ALTER TABLE ONLY app.sessions ATTACH PARTITION app.sessions_0 FOR VALUES WITH (modulus 2, remainder 0);


--
-- Name: sessions_1; Type: TABLE ATTACH; Schema: app; Owner: -
--

ALTER TABLE ONLY app.sessions ATTACH PARTITION app.sessions_1 FOR VALUES WITH (modulus 2, remainder 1);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id, created_at);


--
-- Name: events_2024 events_2024_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events_2024
    ADD CONSTRAINT events_2024_pkey PRIMARY KEY (id, created_at);


--
-- Name: events_2025 events_2025_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events_2025
    ADD CONSTRAINT events_2025_pkey PRIMARY KEY (id, created_at);


--
-- Name: events_default events_default_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events_default
    ADD CONSTRAINT events_default_pkey PRIMARY KEY (id, created_at);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: events_kind_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_kind_idx ON ONLY app.events USING btree (kind);


--
-- Name: events_2024_kind_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_2024_kind_idx ON app.events_2024 USING btree (kind);


--
-- Name: events_2024_payload_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_2024_payload_idx ON app.events_2024 USING gin (payload);


--
-- Name: events_2025_kind_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_2025_kind_idx ON app.events_2025 USING btree (kind);


--
-- Name: events_default_kind_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_default_kind_idx ON app.events_default USING btree (kind);


--
-- Name: sessions_id_key; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX sessions_id_key ON ONLY app.sessions USING btree (id);


--
-- Name: sessions_0_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX sessions_0_id_idx ON app.sessions_0 USING btree (id);


--
-- Name: sessions_1_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX sessions_1_id_idx ON app.sessions_1 USING btree (id);


--
-- Name: events_2024_kind_idx; Type: INDEX ATTACH; Schema: app; Owner: -
--

ALTER INDEX app.events_kind_idx ATTACH PARTITION app.events_2024_kind_idx;


--
-- Name: events_2024_pkey; Type: INDEX ATTACH; Schema: app; Owner: -
--

ALTER INDEX app.events_pkey ATTACH PARTITION app.events_2024_pkey;


--
-- Name: events_2025_kind_idx; Type: INDEX ATTACH; Schema: app; Owner: -
--

ALTER INDEX app.events_kind_idx ATTACH PARTITION app.events_2025_kind_idx;


--
-- Name: events_2025_pkey; Type: INDEX ATTACH; Schema: app; Owner: -
--

ALTER INDEX app.events_pkey ATTACH PARTITION app.events_2025_pkey;


--
-- Name: events_default_kind_idx; Type: INDEX ATTACH; Schema: app; Owner: -
--

ALTER INDEX app.events_kind_idx ATTACH PARTITION app.events_default_kind_idx;


--
-- Name: events_default_pkey; Type: INDEX ATTACH; Schema: app; Owner: -
--

ALTER INDEX app.events_pkey ATTACH PARTITION app.events_default_pkey;


--
-- Name: sessions_0_id_idx; Type: INDEX ATTACH; Schema: app; Owner: -
--

ALTER INDEX app.sessions_id_key ATTACH PARTITION app.sessions_0_id_idx;


--
-- Name: sessions_1_id_idx; Type: INDEX ATTACH; Schema: app; Owner: -
--

ALTER INDEX app.sessions_id_key ATTACH PARTITION app.sessions_1_id_idx;


--
-- Name: orders orders_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE app.orders
    ADD CONSTRAINT orders_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id);


--
-- PostgreSQL database dump complete
--

\unrestrict wKeg0ALcROvliireUO5OjDlxjUD6hNxCyxrLWau61c7tAfgtORdIv23P0QASNbR

