//! The PtahSchema reconciler: a pure decision function and the thin shell that performs its actions.
