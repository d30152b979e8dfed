//! The two reconcilers, PtahSchema and PtahMigration: each a pure decision function over
//! observed state ([`schema::decide`], [`migration::decide`]) on one shared operation mechanism
//! ([`operation`]), and the thin shell ([`shell`]) that gathers that state and performs each
//! decided action with kube-rs. The controller never touches a database: every database read or
//! write is a Job.

pub mod conditions;
pub mod migration;
pub mod operation;
pub mod resultrecords;
pub mod schema;
pub mod shell;

#[cfg(test)]
mod health;
