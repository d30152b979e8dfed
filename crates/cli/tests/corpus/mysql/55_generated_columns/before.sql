CREATE TABLE invoice_line (
  id bigint NOT NULL PRIMARY KEY,
  qty int NOT NULL,
  unit_price decimal(10,2) NOT NULL,
  amount decimal(12,2) GENERATED ALWAYS AS (qty * unit_price) STORED,
  label varchar(40) AS (concat('line ', id)) VIRTUAL
) ENGINE=InnoDB;
