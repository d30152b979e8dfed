CREATE TABLE customers (id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY, email varchar(255) NOT NULL);
CREATE TABLE orders (id bigint NOT NULL PRIMARY KEY, customer_id bigint NOT NULL, placed_at datetime NOT NULL DEFAULT CURRENT_TIMESTAMP, CONSTRAINT orders_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id));
