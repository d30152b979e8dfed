CREATE TABLE t (
  id int NOT NULL PRIMARY KEY,
  created timestamp NOT NULL DEFAULT current_timestamp(),
  updated timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  precise datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  touched datetime NULL ON UPDATE now(),
  later datetime DEFAULT now(),
  n0 int NOT NULL DEFAULT 0,
  n1 int NOT NULL DEFAULT '0',
  bits bit(1) NOT NULL DEFAULT b'0',
  nothing varchar(5) DEFAULT NULL
);
