//! Watch streams that keep ConfigMap metadata only.
