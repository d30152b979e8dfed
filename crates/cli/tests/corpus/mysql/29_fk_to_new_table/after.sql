CREATE TABLE customers (id int NOT NULL PRIMARY KEY);
CREATE TABLE orders (id int NOT NULL PRIMARY KEY, customer_id int, CONSTRAINT orders_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id) ON DELETE SET NULL);
