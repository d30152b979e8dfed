//! Realm Leases with epochs and local-clock expiry, the realm census, and the manager's leader election.
