//! The hardened Job of one data-plane operation.
