//! Fresh execution-binding epochs.

use ptah_api::shared::Epoch;

use crate::StateError;

/// A new random epoch, `v1-` and 128 bits from the operating system in lowercase hex.
///
/// Random rather than derived from the inputs: a rollback to identical inputs must still yield an
/// epoch nothing was ever recorded under.
pub fn fresh_epoch() -> Result<Epoch, StateError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StateError::Randomness(e.to_string()))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Epoch::parse(&format!("v1-{hex}")).map_err(|e| StateError::Randomness(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_have_the_wire_shape_and_do_not_repeat() {
        let a = fresh_epoch().expect("epoch");
        let b = fresh_epoch().expect("epoch");
        assert_eq!(a.as_str().len(), 35);
        assert!(a.as_str().starts_with("v1-"));
        assert_ne!(a, b);
    }
}
