--
-- PostgreSQL database dump
--

\restrict NcP6jGa9da2lg2v86jQE22rSgWrU2yoUvAi16PKxSdZwGvffPQh4mXkybTYskSo

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
-- Name: app; Type: SCHEMA; Schema: -; Owner: app
--

CREATE SCHEMA app;


ALTER SCHEMA app OWNER TO app;

--
-- Name: billing; Type: SCHEMA; Schema: -; Owner: app
--

CREATE SCHEMA billing;


ALTER SCHEMA billing OWNER TO app;

--
-- Name: citext; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS citext WITH SCHEMA public;


--
-- Name: EXTENSION citext; Type: COMMENT; Schema: -; Owner: 
--

COMMENT ON EXTENSION citext IS 'data type for case-insensitive character strings';


--
-- Name: email_address; Type: DOMAIN; Schema: app; Owner: app
--

CREATE DOMAIN app.email_address AS text
	CONSTRAINT email_address_shape CHECK ((VALUE ~ '^[^@]+@[^@]+$'::text));


ALTER DOMAIN app.email_address OWNER TO app;

--
-- Name: order_status; Type: TYPE; Schema: app; Owner: app
--

CREATE TYPE app.order_status AS ENUM (
    'cart',
    'placed',
    'paid',
    'shipped',
    'delivered',
    'cancelled'
);


ALTER TYPE app.order_status OWNER TO app;

--
-- Name: invoice_state; Type: TYPE; Schema: billing; Owner: app
--

CREATE TYPE billing.invoice_state AS ENUM (
    'draft',
    'issued',
    'paid',
    'void'
);


ALTER TYPE billing.invoice_state OWNER TO app;

--
-- Name: money_amount; Type: DOMAIN; Schema: billing; Owner: app
--

CREATE DOMAIN billing.money_amount AS numeric(14,2) NOT NULL DEFAULT 0
	CONSTRAINT money_amount_check CHECK ((VALUE >= (0)::numeric));


ALTER DOMAIN billing.money_amount OWNER TO app;

--
-- Name: DOMAIN money_amount; Type: COMMENT; Schema: billing; Owner: app
--

COMMENT ON DOMAIN billing.money_amount IS 'Never negative';


--
-- Name: _group_concat(text, text); Type: FUNCTION; Schema: app; Owner: app
--

CREATE FUNCTION app._group_concat(text, text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $_$ SELECT CASE WHEN $2 IS NULL THEN $1 WHEN $1 IS NULL THEN $2 ELSE $1 || ', ' || $2 END $_$;


ALTER FUNCTION app._group_concat(text, text) OWNER TO app;

--
-- Name: normalize_email(text); Type: FUNCTION; Schema: app; Owner: app
--

CREATE FUNCTION app.normalize_email(address text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$SELECT lower(btrim(address))$$;


ALTER FUNCTION app.normalize_email(address text) OWNER TO app;

--
-- Name: product_title(text); Type: FUNCTION; Schema: app; Owner: app
--

CREATE FUNCTION app.product_title(p_sku text) RETURNS text
    LANGUAGE sql STABLE COST 5 PARALLEL SAFE
    SET search_path TO 'app', 'pg_temp'
    AS $$ SELECT title FROM app.product WHERE sku = p_sku $$;


ALTER FUNCTION app.product_title(p_sku text) OWNER TO app;

--
-- Name: touch_updated_at(); Type: FUNCTION; Schema: app; Owner: app
--

CREATE FUNCTION app.touch_updated_at() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END;
$$;


ALTER FUNCTION app.touch_updated_at() OWNER TO app;

--
-- Name: FUNCTION touch_updated_at(); Type: COMMENT; Schema: app; Owner: app
--

COMMENT ON FUNCTION app.touch_updated_at() IS 'Keeps updated_at current on every update';


--
-- Name: void_overdue(integer); Type: PROCEDURE; Schema: billing; Owner: app
--

CREATE PROCEDURE billing.void_overdue(IN grace integer DEFAULT 30)
    LANGUAGE plpgsql
    AS $$
BEGIN
  UPDATE billing.invoice
     SET state = 'void'
   WHERE state = 'issued' AND due_on < current_date - grace;
END;
$$;


ALTER PROCEDURE billing.void_overdue(IN grace integer) OWNER TO app;

--
-- Name: group_concat(text); Type: AGGREGATE; Schema: app; Owner: app
--

CREATE AGGREGATE app.group_concat(text) (
    SFUNC = app._group_concat,
    STYPE = text
);


ALTER AGGREGATE app.group_concat(text) OWNER TO app;

--
-- Name: AGGREGATE group_concat(text); Type: COMMENT; Schema: app; Owner: app
--

COMMENT ON AGGREGATE app.group_concat(text) IS 'Joins with commas, as the pagila sample does';


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: address; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.address (
    id bigint NOT NULL,
    customer_id bigint NOT NULL,
    line1 text NOT NULL,
    line2 text,
    city text NOT NULL,
    postcode character varying(16),
    country_code character(2) NOT NULL,
    is_default boolean DEFAULT false NOT NULL
);


ALTER TABLE app.address OWNER TO app;

--
-- Name: address_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

ALTER TABLE app.address ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.address_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: audit_event; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.audit_event (
    id bigint NOT NULL,
    actor text DEFAULT CURRENT_USER NOT NULL,
    action character varying(40) NOT NULL,
    subject text,
    detail jsonb,
    at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE app.audit_event OWNER TO app;

--
-- Name: audit_event_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

ALTER TABLE app.audit_event ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME app.audit_event_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: brand; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.brand (
    id integer NOT NULL,
    name character varying(100) NOT NULL,
    website text
);


ALTER TABLE app.brand OWNER TO app;

--
-- Name: brand_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.brand_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.brand_id_seq OWNER TO app;

--
-- Name: brand_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.brand_id_seq OWNED BY app.brand.id;


--
-- Name: cart; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.cart (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    customer_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone
);


ALTER TABLE app.cart OWNER TO app;

--
-- Name: cart_item; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.cart_item (
    cart_id uuid NOT NULL,
    product_id bigint NOT NULL,
    quantity integer DEFAULT 1 NOT NULL,
    added_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE app.cart_item OWNER TO app;

--
-- Name: category; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.category (
    id integer NOT NULL,
    parent_id integer,
    slug character varying(80) NOT NULL,
    title text NOT NULL
);


ALTER TABLE app.category OWNER TO app;

--
-- Name: category_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.category_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.category_id_seq OWNER TO app;

--
-- Name: category_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.category_id_seq OWNED BY app.category.id;


--
-- Name: product; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.product (
    id bigint NOT NULL,
    sku character varying(32) NOT NULL,
    brand_id integer,
    category_id integer NOT NULL,
    title text NOT NULL,
    description text,
    attributes jsonb DEFAULT '{}'::jsonb NOT NULL,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    weight_grams integer,
    active boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT product_weight_grams_check CHECK ((weight_grams > 0))
);


ALTER TABLE app.product OWNER TO app;

--
-- Name: COLUMN product.attributes; Type: COMMENT; Schema: app; Owner: app
--

COMMENT ON COLUMN app.product.attributes IS 'Free-form facets';


--
-- Name: category_titles; Type: VIEW; Schema: app; Owner: app
--

CREATE VIEW app.category_titles AS
 SELECT product.category_id,
    app.group_concat(product.title) AS titles
   FROM app.product
  GROUP BY product.category_id;


ALTER TABLE app.category_titles OWNER TO app;

--
-- Name: country; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.country (
    code character(2) NOT NULL,
    name text NOT NULL,
    eu boolean DEFAULT false NOT NULL
);


ALTER TABLE app.country OWNER TO app;

--
-- Name: coupon; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.coupon (
    code character varying(32) NOT NULL,
    percent_off numeric(5,2),
    amount_off numeric(12,2),
    valid_until timestamp with time zone,
    max_uses integer,
    CONSTRAINT coupon_one_kind CHECK (((percent_off IS NULL) <> (amount_off IS NULL))),
    CONSTRAINT coupon_percent_off_check CHECK (((percent_off > (0)::numeric) AND (percent_off <= (100)::numeric)))
);


ALTER TABLE app.coupon OWNER TO app;

--
-- Name: currency; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.currency (
    code character(3) NOT NULL,
    name text NOT NULL,
    minor_units smallint DEFAULT 2 NOT NULL,
    CONSTRAINT currency_minor_units_check CHECK (((minor_units >= 0) AND (minor_units <= 4)))
);


ALTER TABLE app.currency OWNER TO app;

--
-- Name: customer; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.customer (
    id bigint NOT NULL,
    email public.citext NOT NULL,
    display_name character varying(120) NOT NULL,
    sort_name text COLLATE pg_catalog."C",
    country_code character(2),
    marketing_opt_in boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone
);


ALTER TABLE app.customer OWNER TO app;

--
-- Name: TABLE customer; Type: COMMENT; Schema: app; Owner: app
--

COMMENT ON TABLE app.customer IS 'People who buy';


--
-- Name: COLUMN customer.email; Type: COMMENT; Schema: app; Owner: app
--

COMMENT ON COLUMN app.customer.email IS 'Login, case-insensitive';


--
-- Name: customer_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.customer_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.customer_id_seq OWNER TO app;

--
-- Name: customer_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.customer_id_seq OWNED BY app.customer.id;


--
-- Name: order_line; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.order_line (
    order_id bigint NOT NULL,
    line_no smallint NOT NULL,
    product_id bigint NOT NULL,
    quantity integer NOT NULL,
    unit_price numeric(12,2) NOT NULL,
    discount numeric(12,2) DEFAULT 0 NOT NULL,
    line_total numeric GENERATED ALWAYS AS ((((quantity)::numeric * unit_price) - discount)) STORED
);


ALTER TABLE app.order_line OWNER TO app;

--
-- Name: orders; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.orders (
    id bigint NOT NULL,
    customer_id bigint NOT NULL,
    status app.order_status DEFAULT 'cart'::app.order_status NOT NULL,
    currency_code character(3) NOT NULL,
    coupon_code character varying(32),
    shipping_address_id bigint,
    total numeric(14,2) DEFAULT 0 NOT NULL,
    placed_at timestamp with time zone,
    history app.order_status[]
);


ALTER TABLE app.orders OWNER TO app;

--
-- Name: order_totals; Type: VIEW; Schema: app; Owner: app
--

CREATE VIEW app.order_totals AS
 SELECT o.id,
    o.customer_id,
    o.status,
    sum((((l.quantity)::numeric * l.unit_price) - l.discount)) AS lines_total,
    count(*) AS lines
   FROM (app.orders o
     JOIN app.order_line l ON ((l.order_id = o.id)))
  GROUP BY o.id, o.customer_id, o.status;


ALTER TABLE app.order_totals OWNER TO app;

--
-- Name: VIEW order_totals; Type: COMMENT; Schema: app; Owner: app
--

COMMENT ON VIEW app.order_totals IS 'Per order, from its lines';


--
-- Name: customer_value; Type: VIEW; Schema: app; Owner: app
--

CREATE VIEW app.customer_value AS
 SELECT c.id,
    c.email,
    c.display_name,
    COALESCE(sum(t.lines_total), (0)::numeric) AS lifetime_value
   FROM (app.customer c
     LEFT JOIN app.order_totals t ON (((t.customer_id = c.id) AND (t.status <> 'cancelled'::app.order_status))))
  GROUP BY c.id, c.email, c.display_name;


ALTER TABLE app.customer_value OWNER TO app;

--
-- Name: orders_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.orders_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.orders_id_seq OWNER TO app;

--
-- Name: orders_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.orders_id_seq OWNED BY app.orders.id;


--
-- Name: page_views; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.page_views (
    id bigint NOT NULL,
    viewed_at date NOT NULL,
    path text NOT NULL,
    referrer text
)
PARTITION BY RANGE (viewed_at);


ALTER TABLE app.page_views OWNER TO app;

--
-- Name: TABLE page_views; Type: COMMENT; Schema: app; Owner: app
--

COMMENT ON TABLE app.page_views IS 'one row per page view, partitioned by year';


--
-- Name: page_views_2025; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.page_views_2025 (
    id bigint NOT NULL,
    viewed_at date NOT NULL,
    path text NOT NULL,
    referrer text
);


ALTER TABLE app.page_views_2025 OWNER TO app;

--
-- Name: page_views_2026; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.page_views_2026 (
    id bigint NOT NULL,
    viewed_at date NOT NULL,
    path text NOT NULL,
    referrer text
);


ALTER TABLE app.page_views_2026 OWNER TO app;

--
-- Name: page_views_default; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.page_views_default (
    id bigint NOT NULL,
    viewed_at date NOT NULL,
    path text NOT NULL,
    referrer text
);


ALTER TABLE app.page_views_default OWNER TO app;

--
-- Name: price; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.price (
    product_id bigint NOT NULL,
    currency_code character(3) NOT NULL,
    amount numeric(12,2) NOT NULL,
    valid_from date DEFAULT CURRENT_DATE NOT NULL,
    CONSTRAINT price_amount_check CHECK ((amount >= (0)::numeric))
);


ALTER TABLE app.price OWNER TO app;

--
-- Name: product_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.product_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.product_id_seq OWNER TO app;

--
-- Name: product_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.product_id_seq OWNED BY app.product.id;


--
-- Name: product_image; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.product_image (
    id bigint NOT NULL,
    product_id bigint NOT NULL,
    url text NOT NULL,
    "position" smallint DEFAULT 0 NOT NULL,
    alt_text text
);


ALTER TABLE app.product_image OWNER TO app;

--
-- Name: product_image_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.product_image_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.product_image_id_seq OWNER TO app;

--
-- Name: product_image_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.product_image_id_seq OWNED BY app.product_image.id;


--
-- Name: purchase_order; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.purchase_order (
    id bigint NOT NULL,
    supplier_id integer NOT NULL,
    warehouse_id smallint NOT NULL,
    ordered_at timestamp with time zone DEFAULT now() NOT NULL,
    received_at timestamp with time zone,
    note text
);


ALTER TABLE app.purchase_order OWNER TO app;

--
-- Name: purchase_order_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.purchase_order_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.purchase_order_id_seq OWNER TO app;

--
-- Name: purchase_order_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.purchase_order_id_seq OWNED BY app.purchase_order.id;


--
-- Name: purchase_order_line; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.purchase_order_line (
    purchase_order_id bigint NOT NULL,
    line_no smallint NOT NULL,
    product_id bigint NOT NULL,
    quantity integer NOT NULL,
    unit_cost numeric(12,4) NOT NULL,
    CONSTRAINT purchase_order_line_quantity_check CHECK ((quantity > 0))
);


ALTER TABLE app.purchase_order_line OWNER TO app;

--
-- Name: return_request; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.return_request (
    id bigint NOT NULL,
    order_id bigint NOT NULL,
    line_no smallint NOT NULL,
    reason text NOT NULL,
    requested_at timestamp with time zone DEFAULT now() NOT NULL,
    approved boolean
);


ALTER TABLE app.return_request OWNER TO app;

--
-- Name: return_request_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.return_request_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.return_request_id_seq OWNER TO app;

--
-- Name: return_request_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.return_request_id_seq OWNED BY app.return_request.id;


--
-- Name: review; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.review (
    id bigint NOT NULL,
    product_id bigint NOT NULL,
    customer_id bigint,
    rating smallint NOT NULL,
    body text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT review_rating_check CHECK (((rating >= 1) AND (rating <= 5)))
);


ALTER TABLE app.review OWNER TO app;

--
-- Name: review_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.review_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.review_id_seq OWNER TO app;

--
-- Name: review_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.review_id_seq OWNED BY app.review.id;


--
-- Name: session; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.session (
    token character(64) NOT NULL,
    customer_id bigint NOT NULL,
    ip inet,
    user_agent text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen timestamp with time zone
);


ALTER TABLE app.session OWNER TO app;

--
-- Name: setting; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.setting (
    key character varying(64) NOT NULL,
    value text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE app.setting OWNER TO app;

--
-- Name: shipment; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.shipment (
    id bigint NOT NULL,
    order_id bigint NOT NULL,
    warehouse_id smallint NOT NULL,
    carrier character varying(40),
    tracking_no character varying(64),
    shipped_at timestamp with time zone,
    delivered_at timestamp with time zone
);


ALTER TABLE app.shipment OWNER TO app;

--
-- Name: shipment_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.shipment_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.shipment_id_seq OWNER TO app;

--
-- Name: shipment_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.shipment_id_seq OWNED BY app.shipment.id;


--
-- Name: stock; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.stock (
    warehouse_id smallint NOT NULL,
    product_id bigint NOT NULL,
    on_hand integer DEFAULT 0 NOT NULL,
    reserved integer DEFAULT 0 NOT NULL,
    CONSTRAINT stock_reserved_check CHECK ((reserved <= on_hand))
);


ALTER TABLE app.stock OWNER TO app;

--
-- Name: supplier; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.supplier (
    id integer NOT NULL,
    name text NOT NULL,
    email public.citext,
    phone character varying(32),
    country_code character(2),
    contact_email app.email_address
);


ALTER TABLE app.supplier OWNER TO app;

--
-- Name: supplier_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.supplier_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.supplier_id_seq OWNER TO app;

--
-- Name: supplier_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.supplier_id_seq OWNED BY app.supplier.id;


--
-- Name: supplier_product; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.supplier_product (
    supplier_id integer NOT NULL,
    product_id bigint NOT NULL,
    lead_days smallint DEFAULT 7 NOT NULL
);


ALTER TABLE app.supplier_product OWNER TO app;

--
-- Name: ticket_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.ticket_seq
    START WITH 500
    INCREMENT BY 5
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.ticket_seq OWNER TO app;

--
-- Name: warehouse; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.warehouse (
    id smallint NOT NULL,
    code character varying(10) NOT NULL,
    country_code character(2) NOT NULL,
    opened_on date
);


ALTER TABLE app.warehouse OWNER TO app;

--
-- Name: warehouse_id_seq; Type: SEQUENCE; Schema: app; Owner: app
--

CREATE SEQUENCE app.warehouse_id_seq
    AS smallint
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE app.warehouse_id_seq OWNER TO app;

--
-- Name: warehouse_id_seq; Type: SEQUENCE OWNED BY; Schema: app; Owner: app
--

ALTER SEQUENCE app.warehouse_id_seq OWNED BY app.warehouse.id;


--
-- Name: wishlist; Type: TABLE; Schema: app; Owner: app
--

CREATE TABLE app.wishlist (
    customer_id bigint NOT NULL,
    product_id bigint NOT NULL,
    added_at timestamp without time zone DEFAULT now() NOT NULL
);


ALTER TABLE app.wishlist OWNER TO app;

--
-- Name: invoice; Type: TABLE; Schema: billing; Owner: app
--

CREATE TABLE billing.invoice (
    id bigint NOT NULL,
    order_id bigint NOT NULL,
    number character varying(20) NOT NULL,
    state billing.invoice_state DEFAULT 'draft'::billing.invoice_state NOT NULL,
    issued_on date,
    due_on date,
    net numeric(14,2) NOT NULL,
    tax numeric(14,2) NOT NULL,
    CONSTRAINT invoice_due_after_issue CHECK (((due_on IS NULL) OR (due_on >= issued_on)))
);

ALTER TABLE ONLY billing.invoice FORCE ROW LEVEL SECURITY;


ALTER TABLE billing.invoice OWNER TO app;

--
-- Name: TABLE invoice; Type: COMMENT; Schema: billing; Owner: app
--

COMMENT ON TABLE billing.invoice IS 'Legal documents; never deleted';


--
-- Name: invoice_id_seq; Type: SEQUENCE; Schema: billing; Owner: app
--

CREATE SEQUENCE billing.invoice_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE billing.invoice_id_seq OWNER TO app;

--
-- Name: invoice_id_seq; Type: SEQUENCE OWNED BY; Schema: billing; Owner: app
--

ALTER SEQUENCE billing.invoice_id_seq OWNED BY billing.invoice.id;


--
-- Name: invoice_number; Type: SEQUENCE; Schema: billing; Owner: app
--

CREATE SEQUENCE billing.invoice_number
    AS integer
    START WITH 10000
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 20;


ALTER TABLE billing.invoice_number OWNER TO app;

--
-- Name: SEQUENCE invoice_number; Type: COMMENT; Schema: billing; Owner: app
--

COMMENT ON SEQUENCE billing.invoice_number IS 'numbers printed on invoices, never reused';


--
-- Name: ledger_entry; Type: TABLE; Schema: billing; Owner: app
--

CREATE TABLE billing.ledger_entry (
    id bigint NOT NULL,
    account character varying(32) NOT NULL,
    debit numeric(16,2) DEFAULT 0 NOT NULL,
    credit numeric(16,2) DEFAULT 0 NOT NULL,
    invoice_id bigint,
    posted_at timestamp with time zone DEFAULT now() NOT NULL,
    memo text
);


ALTER TABLE billing.ledger_entry OWNER TO app;

--
-- Name: ledger_balance; Type: MATERIALIZED VIEW; Schema: billing; Owner: app
--

CREATE MATERIALIZED VIEW billing.ledger_balance AS
 SELECT ledger_entry.account,
    (sum(ledger_entry.debit) - sum(ledger_entry.credit)) AS balance,
    max(ledger_entry.posted_at) AS last_posted
   FROM billing.ledger_entry
  GROUP BY ledger_entry.account
  WITH NO DATA;


ALTER TABLE billing.ledger_balance OWNER TO app;

--
-- Name: MATERIALIZED VIEW ledger_balance; Type: COMMENT; Schema: billing; Owner: app
--

COMMENT ON MATERIALIZED VIEW billing.ledger_balance IS 'Refreshed by the nightly job';


--
-- Name: ledger_entry_id_seq; Type: SEQUENCE; Schema: billing; Owner: app
--

ALTER TABLE billing.ledger_entry ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME billing.ledger_entry_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: open_invoices; Type: VIEW; Schema: billing; Owner: app
--

CREATE VIEW billing.open_invoices AS
 SELECT i.id,
    i.number,
    i.due_on,
    (i.net + i.tax) AS gross
   FROM billing.invoice i
  WHERE ((i.state = ANY (ARRAY['draft'::billing.invoice_state, 'issued'::billing.invoice_state])) AND ((i.due_on IS NULL) OR (i.due_on >= CURRENT_DATE)));


ALTER TABLE billing.open_invoices OWNER TO app;

--
-- Name: payment; Type: TABLE; Schema: billing; Owner: app
--

CREATE TABLE billing.payment (
    id bigint NOT NULL,
    invoice_id bigint NOT NULL,
    provider character varying(32) NOT NULL,
    provider_ref character varying(128),
    amount numeric(14,2) NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    raw jsonb
);


ALTER TABLE billing.payment OWNER TO app;

--
-- Name: payment_id_seq; Type: SEQUENCE; Schema: billing; Owner: app
--

CREATE SEQUENCE billing.payment_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE billing.payment_id_seq OWNER TO app;

--
-- Name: payment_id_seq; Type: SEQUENCE OWNED BY; Schema: billing; Owner: app
--

ALTER SEQUENCE billing.payment_id_seq OWNED BY billing.payment.id;


--
-- Name: refund; Type: TABLE; Schema: billing; Owner: app
--

CREATE TABLE billing.refund (
    id bigint NOT NULL,
    payment_id bigint NOT NULL,
    amount numeric(14,2) NOT NULL,
    reason text,
    refunded_at timestamp with time zone DEFAULT now() NOT NULL,
    fee billing.money_amount,
    CONSTRAINT refund_amount_check CHECK ((amount > (0)::numeric))
);


ALTER TABLE billing.refund OWNER TO app;

--
-- Name: refund_id_seq; Type: SEQUENCE; Schema: billing; Owner: app
--

CREATE SEQUENCE billing.refund_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE billing.refund_id_seq OWNER TO app;

--
-- Name: refund_id_seq; Type: SEQUENCE OWNED BY; Schema: billing; Owner: app
--

ALTER SEQUENCE billing.refund_id_seq OWNED BY billing.refund.id;


--
-- Name: tax_rate; Type: TABLE; Schema: billing; Owner: app
--

CREATE TABLE billing.tax_rate (
    country_code character(2) NOT NULL,
    category_id integer NOT NULL,
    rate numeric(5,4) NOT NULL
);


ALTER TABLE billing.tax_rate OWNER TO app;

--
-- Name: page_views_2025; Type: TABLE ATTACH; Schema: app; Owner: app
--

ALTER TABLE ONLY app.page_views ATTACH PARTITION app.page_views_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');


--
-- Name: page_views_2026; Type: TABLE ATTACH; Schema: app; Owner: app
--

ALTER TABLE ONLY app.page_views ATTACH PARTITION app.page_views_2026 FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');


--
-- Name: page_views_default; Type: TABLE ATTACH; Schema: app; Owner: app
--

ALTER TABLE ONLY app.page_views ATTACH PARTITION app.page_views_default DEFAULT;


--
-- Name: brand id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.brand ALTER COLUMN id SET DEFAULT nextval('app.brand_id_seq'::regclass);


--
-- Name: category id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.category ALTER COLUMN id SET DEFAULT nextval('app.category_id_seq'::regclass);


--
-- Name: customer id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.customer ALTER COLUMN id SET DEFAULT nextval('app.customer_id_seq'::regclass);


--
-- Name: orders id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.orders ALTER COLUMN id SET DEFAULT nextval('app.orders_id_seq'::regclass);


--
-- Name: product id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.product ALTER COLUMN id SET DEFAULT nextval('app.product_id_seq'::regclass);


--
-- Name: product_image id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.product_image ALTER COLUMN id SET DEFAULT nextval('app.product_image_id_seq'::regclass);


--
-- Name: purchase_order id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.purchase_order ALTER COLUMN id SET DEFAULT nextval('app.purchase_order_id_seq'::regclass);


--
-- Name: return_request id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.return_request ALTER COLUMN id SET DEFAULT nextval('app.return_request_id_seq'::regclass);


--
-- Name: review id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.review ALTER COLUMN id SET DEFAULT nextval('app.review_id_seq'::regclass);


--
-- Name: shipment id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.shipment ALTER COLUMN id SET DEFAULT nextval('app.shipment_id_seq'::regclass);


--
-- Name: supplier id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.supplier ALTER COLUMN id SET DEFAULT nextval('app.supplier_id_seq'::regclass);


--
-- Name: warehouse id; Type: DEFAULT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.warehouse ALTER COLUMN id SET DEFAULT nextval('app.warehouse_id_seq'::regclass);


--
-- Name: invoice id; Type: DEFAULT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.invoice ALTER COLUMN id SET DEFAULT nextval('billing.invoice_id_seq'::regclass);


--
-- Name: payment id; Type: DEFAULT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.payment ALTER COLUMN id SET DEFAULT nextval('billing.payment_id_seq'::regclass);


--
-- Name: refund id; Type: DEFAULT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.refund ALTER COLUMN id SET DEFAULT nextval('billing.refund_id_seq'::regclass);


--
-- Name: address address_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.address
    ADD CONSTRAINT address_pkey PRIMARY KEY (id);


--
-- Name: audit_event audit_event_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.audit_event
    ADD CONSTRAINT audit_event_pkey PRIMARY KEY (id);


--
-- Name: brand brand_name_key; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.brand
    ADD CONSTRAINT brand_name_key UNIQUE (name);


--
-- Name: brand brand_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.brand
    ADD CONSTRAINT brand_pkey PRIMARY KEY (id);


--
-- Name: cart_item cart_item_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.cart_item
    ADD CONSTRAINT cart_item_pkey PRIMARY KEY (cart_id, product_id);


--
-- Name: cart cart_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.cart
    ADD CONSTRAINT cart_pkey PRIMARY KEY (id);


--
-- Name: category category_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.category
    ADD CONSTRAINT category_pkey PRIMARY KEY (id);


--
-- Name: category category_slug_key; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.category
    ADD CONSTRAINT category_slug_key UNIQUE (slug);


--
-- Name: country country_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.country
    ADD CONSTRAINT country_pkey PRIMARY KEY (code);


--
-- Name: coupon coupon_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.coupon
    ADD CONSTRAINT coupon_pkey PRIMARY KEY (code);


--
-- Name: currency currency_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.currency
    ADD CONSTRAINT currency_pkey PRIMARY KEY (code);


--
-- Name: customer customer_email_key; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.customer
    ADD CONSTRAINT customer_email_key UNIQUE (email);


--
-- Name: customer customer_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.customer
    ADD CONSTRAINT customer_pkey PRIMARY KEY (id);


--
-- Name: order_line order_line_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.order_line
    ADD CONSTRAINT order_line_pkey PRIMARY KEY (order_id, line_no);


--
-- Name: orders orders_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_pkey PRIMARY KEY (id);


--
-- Name: page_views page_views_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.page_views
    ADD CONSTRAINT page_views_pkey PRIMARY KEY (id, viewed_at);


--
-- Name: page_views_2025 page_views_2025_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.page_views_2025
    ADD CONSTRAINT page_views_2025_pkey PRIMARY KEY (id, viewed_at);


--
-- Name: page_views_2026 page_views_2026_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.page_views_2026
    ADD CONSTRAINT page_views_2026_pkey PRIMARY KEY (id, viewed_at);


--
-- Name: page_views_default page_views_default_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.page_views_default
    ADD CONSTRAINT page_views_default_pkey PRIMARY KEY (id, viewed_at);


--
-- Name: price price_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.price
    ADD CONSTRAINT price_pkey PRIMARY KEY (product_id, currency_code, valid_from);


--
-- Name: product_image product_image_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.product_image
    ADD CONSTRAINT product_image_pkey PRIMARY KEY (id);


--
-- Name: product product_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.product
    ADD CONSTRAINT product_pkey PRIMARY KEY (id);


--
-- Name: product product_sku_key; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.product
    ADD CONSTRAINT product_sku_key UNIQUE (sku);


--
-- Name: purchase_order_line purchase_order_line_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.purchase_order_line
    ADD CONSTRAINT purchase_order_line_pkey PRIMARY KEY (purchase_order_id, line_no);


--
-- Name: purchase_order purchase_order_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.purchase_order
    ADD CONSTRAINT purchase_order_pkey PRIMARY KEY (id);


--
-- Name: return_request return_request_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.return_request
    ADD CONSTRAINT return_request_pkey PRIMARY KEY (id);


--
-- Name: review review_once; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.review
    ADD CONSTRAINT review_once UNIQUE (product_id, customer_id);


--
-- Name: review review_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.review
    ADD CONSTRAINT review_pkey PRIMARY KEY (id);


--
-- Name: session session_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.session
    ADD CONSTRAINT session_pkey PRIMARY KEY (token);


--
-- Name: setting setting_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.setting
    ADD CONSTRAINT setting_pkey PRIMARY KEY (key);


--
-- Name: shipment shipment_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.shipment
    ADD CONSTRAINT shipment_pkey PRIMARY KEY (id);


--
-- Name: stock stock_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.stock
    ADD CONSTRAINT stock_pkey PRIMARY KEY (warehouse_id, product_id);


--
-- Name: supplier supplier_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.supplier
    ADD CONSTRAINT supplier_pkey PRIMARY KEY (id);


--
-- Name: supplier_product supplier_product_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.supplier_product
    ADD CONSTRAINT supplier_product_pkey PRIMARY KEY (supplier_id, product_id);


--
-- Name: warehouse warehouse_code_key; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.warehouse
    ADD CONSTRAINT warehouse_code_key UNIQUE (code);


--
-- Name: warehouse warehouse_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.warehouse
    ADD CONSTRAINT warehouse_pkey PRIMARY KEY (id);


--
-- Name: wishlist wishlist_pkey; Type: CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.wishlist
    ADD CONSTRAINT wishlist_pkey PRIMARY KEY (customer_id, product_id);


--
-- Name: invoice invoice_number_key; Type: CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.invoice
    ADD CONSTRAINT invoice_number_key UNIQUE (number);


--
-- Name: invoice invoice_pkey; Type: CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.invoice
    ADD CONSTRAINT invoice_pkey PRIMARY KEY (id);


--
-- Name: ledger_entry ledger_entry_pkey; Type: CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.ledger_entry
    ADD CONSTRAINT ledger_entry_pkey PRIMARY KEY (id);


--
-- Name: payment payment_pkey; Type: CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.payment
    ADD CONSTRAINT payment_pkey PRIMARY KEY (id);


--
-- Name: refund refund_pkey; Type: CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.refund
    ADD CONSTRAINT refund_pkey PRIMARY KEY (id);


--
-- Name: tax_rate tax_rate_pkey; Type: CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.tax_rate
    ADD CONSTRAINT tax_rate_pkey PRIMARY KEY (country_code, category_id);


--
-- Name: address_one_default_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE UNIQUE INDEX address_one_default_idx ON app.address USING btree (customer_id) WHERE is_default;


--
-- Name: audit_event_at_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX audit_event_at_idx ON app.audit_event USING btree (at);


--
-- Name: INDEX audit_event_at_idx; Type: COMMENT; Schema: app; Owner: app
--

COMMENT ON INDEX app.audit_event_at_idx IS 'retention sweeps';


--
-- Name: customer_created_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX customer_created_idx ON app.customer USING btree (created_at DESC);


--
-- Name: customer_lower_name_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX customer_lower_name_idx ON app.customer USING btree (lower((display_name)::text));


--
-- Name: order_line_total_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX order_line_total_idx ON app.order_line USING btree (line_total DESC);


--
-- Name: INDEX order_line_total_idx; Type: COMMENT; Schema: app; Owner: app
--

COMMENT ON INDEX app.order_line_total_idx IS 'largest lines first, for the fraud review';


--
-- Name: orders_customer_placed_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX orders_customer_placed_idx ON app.orders USING btree (customer_id, placed_at DESC);


--
-- Name: orders_open_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX orders_open_idx ON app.orders USING btree (status) WHERE (status <> ALL (ARRAY['delivered'::app.order_status, 'cancelled'::app.order_status]));


--
-- Name: page_views_path_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX page_views_path_idx ON ONLY app.page_views USING btree (path);


--
-- Name: page_views_2025_path_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX page_views_2025_path_idx ON app.page_views_2025 USING btree (path);


--
-- Name: page_views_2026_path_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX page_views_2026_path_idx ON app.page_views_2026 USING btree (path);


--
-- Name: page_views_default_path_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX page_views_default_path_idx ON app.page_views_default USING btree (path);


--
-- Name: product_active_category_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX product_active_category_idx ON app.product USING btree (category_id) WHERE active;


--
-- Name: product_attributes_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX product_attributes_idx ON app.product USING gin (attributes);


--
-- Name: product_category_covering; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX product_category_covering ON app.product USING btree (category_id) INCLUDE (title) WITH (fillfactor='80');


--
-- Name: product_image_product_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX product_image_product_idx ON app.product_image USING btree (product_id, "position");


--
-- Name: product_recent; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX product_recent ON app.product USING btree (created_at DESC NULLS LAST, weight_grams NULLS FIRST);


--
-- Name: product_sku_once; Type: INDEX; Schema: app; Owner: app
--

CREATE UNIQUE INDEX product_sku_once ON app.product USING btree (sku) NULLS NOT DISTINCT;


--
-- Name: product_sku_pattern; Type: INDEX; Schema: app; Owner: app
--

CREATE INDEX product_sku_pattern ON app.product USING btree (sku varchar_pattern_ops);


--
-- Name: shipment_tracking_idx; Type: INDEX; Schema: app; Owner: app
--

CREATE UNIQUE INDEX shipment_tracking_idx ON app.shipment USING btree (carrier, tracking_no) WHERE (tracking_no IS NOT NULL);


--
-- Name: ledger_entry_account_idx; Type: INDEX; Schema: billing; Owner: app
--

CREATE INDEX ledger_entry_account_idx ON billing.ledger_entry USING btree (account, posted_at);


--
-- Name: payment_provider_ref_idx; Type: INDEX; Schema: billing; Owner: app
--

CREATE UNIQUE INDEX payment_provider_ref_idx ON billing.payment USING btree (provider, provider_ref);


--
-- Name: page_views_2025_path_idx; Type: INDEX ATTACH; Schema: app; Owner: app
--

ALTER INDEX app.page_views_path_idx ATTACH PARTITION app.page_views_2025_path_idx;


--
-- Name: page_views_2025_pkey; Type: INDEX ATTACH; Schema: app; Owner: app
--

ALTER INDEX app.page_views_pkey ATTACH PARTITION app.page_views_2025_pkey;


--
-- Name: page_views_2026_path_idx; Type: INDEX ATTACH; Schema: app; Owner: app
--

ALTER INDEX app.page_views_path_idx ATTACH PARTITION app.page_views_2026_path_idx;


--
-- Name: page_views_2026_pkey; Type: INDEX ATTACH; Schema: app; Owner: app
--

ALTER INDEX app.page_views_pkey ATTACH PARTITION app.page_views_2026_pkey;


--
-- Name: page_views_default_path_idx; Type: INDEX ATTACH; Schema: app; Owner: app
--

ALTER INDEX app.page_views_path_idx ATTACH PARTITION app.page_views_default_path_idx;


--
-- Name: page_views_default_pkey; Type: INDEX ATTACH; Schema: app; Owner: app
--

ALTER INDEX app.page_views_pkey ATTACH PARTITION app.page_views_default_pkey;


--
-- Name: customer customer_touch; Type: TRIGGER; Schema: app; Owner: app
--

CREATE TRIGGER customer_touch BEFORE UPDATE ON app.customer FOR EACH ROW EXECUTE FUNCTION app.touch_updated_at();


--
-- Name: setting setting_touch; Type: TRIGGER; Schema: app; Owner: app
--

CREATE TRIGGER setting_touch BEFORE UPDATE ON app.setting FOR EACH ROW WHEN ((old.value IS DISTINCT FROM new.value)) EXECUTE FUNCTION app.touch_updated_at();


--
-- Name: address address_country_code_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.address
    ADD CONSTRAINT address_country_code_fkey FOREIGN KEY (country_code) REFERENCES app.country(code);


--
-- Name: address address_customer_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.address
    ADD CONSTRAINT address_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app.customer(id) ON DELETE CASCADE;


--
-- Name: cart cart_customer_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.cart
    ADD CONSTRAINT cart_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app.customer(id) ON DELETE SET NULL;


--
-- Name: cart_item cart_item_cart_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.cart_item
    ADD CONSTRAINT cart_item_cart_id_fkey FOREIGN KEY (cart_id) REFERENCES app.cart(id) ON DELETE CASCADE;


--
-- Name: cart_item cart_item_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.cart_item
    ADD CONSTRAINT cart_item_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.product(id);


--
-- Name: category category_parent_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.category
    ADD CONSTRAINT category_parent_id_fkey FOREIGN KEY (parent_id) REFERENCES app.category(id) ON DELETE SET NULL;


--
-- Name: customer customer_country_code_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.customer
    ADD CONSTRAINT customer_country_code_fkey FOREIGN KEY (country_code) REFERENCES app.country(code) ON UPDATE CASCADE;


--
-- Name: order_line order_line_order_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.order_line
    ADD CONSTRAINT order_line_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE CASCADE;


--
-- Name: order_line order_line_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.order_line
    ADD CONSTRAINT order_line_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.product(id);


--
-- Name: orders orders_coupon_code_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_coupon_code_fkey FOREIGN KEY (coupon_code) REFERENCES app.coupon(code) ON DELETE SET NULL;


--
-- Name: orders orders_currency_code_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_currency_code_fkey FOREIGN KEY (currency_code) REFERENCES app.currency(code);


--
-- Name: orders orders_customer_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app.customer(id);


--
-- Name: orders orders_shipping_address_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_shipping_address_id_fkey FOREIGN KEY (shipping_address_id) REFERENCES app.address(id);


--
-- Name: price price_currency_code_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.price
    ADD CONSTRAINT price_currency_code_fkey FOREIGN KEY (currency_code) REFERENCES app.currency(code);


--
-- Name: price price_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.price
    ADD CONSTRAINT price_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.product(id) ON DELETE CASCADE;


--
-- Name: product product_brand_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.product
    ADD CONSTRAINT product_brand_id_fkey FOREIGN KEY (brand_id) REFERENCES app.brand(id) ON DELETE RESTRICT;


--
-- Name: product product_category_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.product
    ADD CONSTRAINT product_category_id_fkey FOREIGN KEY (category_id) REFERENCES app.category(id);


--
-- Name: product_image product_image_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.product_image
    ADD CONSTRAINT product_image_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.product(id) ON DELETE CASCADE;


--
-- Name: purchase_order_line purchase_order_line_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.purchase_order_line
    ADD CONSTRAINT purchase_order_line_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.product(id);


--
-- Name: purchase_order_line purchase_order_line_purchase_order_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.purchase_order_line
    ADD CONSTRAINT purchase_order_line_purchase_order_id_fkey FOREIGN KEY (purchase_order_id) REFERENCES app.purchase_order(id) ON DELETE CASCADE;


--
-- Name: purchase_order purchase_order_supplier_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.purchase_order
    ADD CONSTRAINT purchase_order_supplier_id_fkey FOREIGN KEY (supplier_id) REFERENCES app.supplier(id);


--
-- Name: purchase_order purchase_order_warehouse_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.purchase_order
    ADD CONSTRAINT purchase_order_warehouse_id_fkey FOREIGN KEY (warehouse_id) REFERENCES app.warehouse(id);


--
-- Name: return_request return_request_order_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.return_request
    ADD CONSTRAINT return_request_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id);


--
-- Name: return_request return_request_order_id_line_no_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.return_request
    ADD CONSTRAINT return_request_order_id_line_no_fkey FOREIGN KEY (order_id, line_no) REFERENCES app.order_line(order_id, line_no);


--
-- Name: review review_customer_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.review
    ADD CONSTRAINT review_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app.customer(id) ON DELETE SET NULL;


--
-- Name: review review_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.review
    ADD CONSTRAINT review_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.product(id) ON DELETE CASCADE;


--
-- Name: session session_customer_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.session
    ADD CONSTRAINT session_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app.customer(id) ON DELETE CASCADE;


--
-- Name: shipment shipment_order_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.shipment
    ADD CONSTRAINT shipment_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE CASCADE;


--
-- Name: shipment shipment_warehouse_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.shipment
    ADD CONSTRAINT shipment_warehouse_id_fkey FOREIGN KEY (warehouse_id) REFERENCES app.warehouse(id);


--
-- Name: stock stock_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.stock
    ADD CONSTRAINT stock_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.product(id) ON DELETE CASCADE;


--
-- Name: stock stock_warehouse_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.stock
    ADD CONSTRAINT stock_warehouse_id_fkey FOREIGN KEY (warehouse_id) REFERENCES app.warehouse(id);


--
-- Name: supplier supplier_country_code_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.supplier
    ADD CONSTRAINT supplier_country_code_fkey FOREIGN KEY (country_code) REFERENCES app.country(code);


--
-- Name: supplier_product supplier_product_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.supplier_product
    ADD CONSTRAINT supplier_product_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.product(id) ON DELETE CASCADE;


--
-- Name: supplier_product supplier_product_supplier_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.supplier_product
    ADD CONSTRAINT supplier_product_supplier_id_fkey FOREIGN KEY (supplier_id) REFERENCES app.supplier(id) ON DELETE CASCADE;


--
-- Name: warehouse warehouse_country_code_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.warehouse
    ADD CONSTRAINT warehouse_country_code_fkey FOREIGN KEY (country_code) REFERENCES app.country(code);


--
-- Name: wishlist wishlist_customer_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.wishlist
    ADD CONSTRAINT wishlist_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES app.customer(id) ON DELETE CASCADE;


--
-- Name: wishlist wishlist_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: app
--

ALTER TABLE ONLY app.wishlist
    ADD CONSTRAINT wishlist_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.product(id) ON DELETE CASCADE;


--
-- Name: invoice invoice_order_id_fkey; Type: FK CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.invoice
    ADD CONSTRAINT invoice_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id);


--
-- Name: ledger_entry ledger_entry_invoice_id_fkey; Type: FK CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.ledger_entry
    ADD CONSTRAINT ledger_entry_invoice_id_fkey FOREIGN KEY (invoice_id) REFERENCES billing.invoice(id);


--
-- Name: payment payment_invoice_id_fkey; Type: FK CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.payment
    ADD CONSTRAINT payment_invoice_id_fkey FOREIGN KEY (invoice_id) REFERENCES billing.invoice(id) ON DELETE RESTRICT;


--
-- Name: refund refund_payment_id_fkey; Type: FK CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.refund
    ADD CONSTRAINT refund_payment_id_fkey FOREIGN KEY (payment_id) REFERENCES billing.payment(id);


--
-- Name: tax_rate tax_rate_category_id_fkey; Type: FK CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.tax_rate
    ADD CONSTRAINT tax_rate_category_id_fkey FOREIGN KEY (category_id) REFERENCES app.category(id);


--
-- Name: tax_rate tax_rate_country_code_fkey; Type: FK CONSTRAINT; Schema: billing; Owner: app
--

ALTER TABLE ONLY billing.tax_rate
    ADD CONSTRAINT tax_rate_country_code_fkey FOREIGN KEY (country_code) REFERENCES app.country(code);


--
-- Name: customer; Type: ROW SECURITY; Schema: app; Owner: app
--

ALTER TABLE app.customer ENABLE ROW LEVEL SECURITY;

--
-- Name: customer customer_self; Type: POLICY; Schema: app; Owner: app
--

CREATE POLICY customer_self ON app.customer FOR SELECT TO shop_reader USING (((email)::text = (CURRENT_USER)::text));


--
-- Name: customer customer_staff; Type: POLICY; Schema: app; Owner: app
--

CREATE POLICY customer_staff ON app.customer TO shop_writer USING (true) WITH CHECK ((country_code IS NOT NULL));


--
-- Name: invoice; Type: ROW SECURITY; Schema: billing; Owner: app
--

ALTER TABLE billing.invoice ENABLE ROW LEVEL SECURITY;

--
-- Name: invoice invoice_issued; Type: POLICY; Schema: billing; Owner: app
--

CREATE POLICY invoice_issued ON billing.invoice AS RESTRICTIVE FOR SELECT USING ((state <> 'draft'::billing.invoice_state));


--
-- Name: invoice invoice_team; Type: POLICY; Schema: billing; Owner: app
--

CREATE POLICY invoice_team ON billing.invoice TO shop_reader, shop_writer USING ((order_id IN ( SELECT o.id
   FROM app.orders o
  WHERE (o.status <> 'cart'::app.order_status))));


--
-- Name: TABLE product; Type: ACL; Schema: app; Owner: app
--

GRANT SELECT ON TABLE app.product TO PUBLIC;


--
-- Name: TABLE customer; Type: ACL; Schema: app; Owner: app
--

GRANT SELECT ON TABLE app.customer TO shop_reader;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE app.customer TO shop_writer WITH GRANT OPTION;


--
-- Name: TABLE order_line; Type: ACL; Schema: app; Owner: app
--

GRANT SELECT ON TABLE app.order_line TO shop_reader;


--
-- Name: TABLE orders; Type: ACL; Schema: app; Owner: app
--

GRANT SELECT ON TABLE app.orders TO shop_reader;
GRANT SELECT,INSERT,UPDATE ON TABLE app.orders TO shop_writer;


--
-- Name: TABLE invoice; Type: ACL; Schema: billing; Owner: app
--

GRANT SELECT ON TABLE billing.invoice TO shop_reader;
GRANT SELECT ON TABLE billing.invoice TO shop_writer;


--
-- PostgreSQL database dump complete
--

\unrestrict NcP6jGa9da2lg2v86jQE22rSgWrU2yoUvAi16PKxSdZwGvffPQh4mXkybTYskSo

