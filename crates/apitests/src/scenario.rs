//! The per-scenario report a `data-plane` scenario test writes: build a [`Record`] and call
//! [`Record::append`] (a no-op outside `cargo xtask e2e`, which sets [`FILE_ENV`] per phase and
//! reads the lines back; `cargo xtask gate` prints them). The type lives in `ptah_testenv`,
//! which the driver shares, so the writer and the reader are one definition.

pub use ptah_testenv::scenario::{Database, Engine, FILE_ENV, LeakScan, Record};
