-- Foreign key options as pg_dump writes them; one key name in two tables (names are per table).
CREATE TABLE public.a (id integer NOT NULL, x integer, y integer);
ALTER TABLE ONLY public.a ADD CONSTRAINT a_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.a ADD CONSTRAINT a_x_y_key UNIQUE (x, y);
CREATE TABLE public.b (id integer NOT NULL, a_id integer, x integer, y integer);
ALTER TABLE ONLY public.b ADD CONSTRAINT b_pkey PRIMARY KEY (id);
CREATE TABLE public.c (id integer NOT NULL, a_id integer);
ALTER TABLE ONLY public.c ADD CONSTRAINT c_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.b
    ADD CONSTRAINT to_a FOREIGN KEY (a_id) REFERENCES public.a(id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE ONLY public.b
    ADD CONSTRAINT b_xy FOREIGN KEY (x, y) REFERENCES public.a(x, y) MATCH FULL;
ALTER TABLE ONLY public.c
    ADD CONSTRAINT to_a FOREIGN KEY (a_id) REFERENCES public.a(id) ON DELETE CASCADE DEFERRABLE;
