-- A column cast to text is part of the expression's meaning: bigint = text does not exist.
CREATE TABLE tenants_data (
    id bigint PRIMARY KEY,
    tenant_id bigint NOT NULL,
    code integer CHECK (code::text <> '0'),
    name varchar(20) CHECK (name::text <> '')
);
CREATE INDEX tenants_data_code ON tenants_data ((code::text));
ALTER TABLE tenants_data ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON tenants_data USING (tenant_id::text = current_setting('app.tenant'));
