//! Bounded-cardinality metrics and tracing setup of the manager.
