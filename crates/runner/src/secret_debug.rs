//! `Debug` for what may hold credentials: the shape and the names are shown, a value only when
//! the environment contract says it is not a credential.

use std::fmt;

use ptah_dataplane::env;

use crate::redact::MARKER;

/// Prints as the redaction marker.
pub(crate) struct Hidden;

impl fmt::Debug for Hidden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MARKER)
    }
}

/// Whether a variable's value may be printed: a variable of the contract that is no credential.
/// Anything else may hold a secret the runner does not know about.
pub(crate) fn shows_value(name: &str) -> bool {
    env::VARS
        .iter()
        .any(|v| v.name == name && v.role != env::Role::Credential)
}

/// Variables as a map, the values of credentials and unknown variables hidden.
pub(crate) struct Vars<I>(pub(crate) I);

impl<'a, I> fmt::Debug for Vars<I>
where
    I: Iterator<Item = (&'a String, &'a String)> + Clone,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (name, value) in self.0.clone() {
            if shows_value(name) {
                map.entry(name, value);
            } else {
                map.entry(name, &Hidden);
            }
        }
        map.finish()
    }
}
