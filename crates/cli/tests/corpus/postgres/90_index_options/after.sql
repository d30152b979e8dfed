-- Every CREATE INDEX option PostgreSQL 15 takes, written as pg_dump writes them.
CREATE TABLE public.items (
    id bigint NOT NULL,
    sku text,
    name character varying(80),
    price numeric,
    seen timestamp with time zone
);
CREATE INDEX items_sku_pattern ON public.items USING btree (sku text_pattern_ops);
CREATE INDEX items_name_pattern ON public.items USING btree (name varchar_pattern_ops DESC NULLS LAST);
CREATE UNIQUE INDEX items_sku_covering ON public.items USING btree (sku) INCLUDE (price, name);
CREATE UNIQUE INDEX items_sku_once ON public.items USING btree (sku) NULLS NOT DISTINCT;
CREATE INDEX items_seen ON public.items USING btree (seen NULLS FIRST) WITH (fillfactor='70');
CREATE INDEX items_price_desc ON public.items USING btree (price DESC) WITH (fillfactor='90', deduplicate_items='off') WHERE (price > (0)::numeric);
CREATE INDEX items_lower ON public.items USING btree (lower(sku) text_pattern_ops, id DESC NULLS LAST);
