CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL);
CREATE TABLE other (id int NOT NULL PRIMARY KEY, x int);
