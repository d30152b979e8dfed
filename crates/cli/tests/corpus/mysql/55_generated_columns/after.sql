CREATE TABLE invoice_line (
  id bigint NOT NULL PRIMARY KEY,
  qty int NOT NULL,
  unit_price decimal(10,2) NOT NULL,
  amount decimal(12,2) GENERATED ALWAYS AS (qty * unit_price * 1.2) STORED,
  label varchar(40) AS (concat('line ', id)) VIRTUAL,
  discounted decimal(12,2) AS (amount * 0.9) STORED,
  KEY invoice_line_amount (amount)
) ENGINE=InnoDB;
