//! The PtahSchema reconciler: a pure decision function ([`schema::decide`]) over observed state,
//! and the thin shell ([`shell`]) that gathers that state and performs each decided action with
//! kube-rs. The controller never touches a database: every database read or write is a Job.

pub mod conditions;
pub mod schema;
pub mod shell;
