//! Maps keyed by qualified name. JSON object keys must be strings, and a qualified name is two;
//! the values carry their names, so a map travels as a list in key order and is rebuilt on
//! reading.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

use super::name::QualifiedName;

/// Writes the map as the list of its values, in key order.
pub fn serialize<V: Serialize, S: Serializer>(
    map: &BTreeMap<QualifiedName, V>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(map.values())
}

/// Reads a list of values into a map by their keys; a key met twice is an error.
pub fn deserialize<'de, V, D>(deserializer: D) -> Result<BTreeMap<QualifiedName, V>, D::Error>
where
    V: Deserialize<'de> + Keyed,
    D: Deserializer<'de>,
{
    let mut map = BTreeMap::new();
    for value in Vec::<V>::deserialize(deserializer)? {
        let key = value.key();
        if map.insert(key.clone(), value).is_some() {
            return Err(D::Error::custom(format!("{key} is declared twice")));
        }
    }
    Ok(map)
}

/// An object that carries its own map key, so a map of them serializes as a plain list.
pub trait Keyed {
    /// The key the object is stored under.
    fn key(&self) -> QualifiedName;
}
