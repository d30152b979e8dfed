//! The durable manager-state contract: versions and the execution-binding epoch.
