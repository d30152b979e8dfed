CREATE TABLE orders (id int NOT NULL PRIMARY KEY, customer_id int);
