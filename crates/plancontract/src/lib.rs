//! Plan byte-size contract (8 MiB, 16 chunks of 512 KiB), chunk maths and the schema plan fingerprint.
