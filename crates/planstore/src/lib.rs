//! Publish a schema plan as an immutable PtahSchemaPlan plus chunks, and load it back with every check.
