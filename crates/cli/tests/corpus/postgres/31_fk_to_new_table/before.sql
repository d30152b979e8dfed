CREATE TABLE orders (id int PRIMARY KEY, customer_id int);
