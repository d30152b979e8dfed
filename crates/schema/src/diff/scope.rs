//! The management scope: `exclude` patterns remove objects from both sides before comparing.

use std::borrow::Cow;

use crate::model::{QualifiedName, Schema};

/// Glob patterns over `schema.name` and `name`; a matching table, enum, view or routine is not
/// managed, and neither are the triggers of a matching table.
///
/// `*` matches any run of characters (dots included), `?` one character; matching ignores ASCII
/// case, so a pattern never fails to exclude an object over its spelling.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExcludeSet {
    patterns: Vec<String>,
}

impl ExcludeSet {
    /// A set of patterns.
    pub fn new(patterns: &[String]) -> Self {
        ExcludeSet {
            patterns: patterns.to_vec(),
        }
    }

    /// Whether `name` is excluded.
    pub fn matches(&self, name: &QualifiedName) -> bool {
        let qualified = (!name.schema.is_empty()).then(|| format!("{}.{}", name.schema, name.name));
        self.patterns
            .iter()
            .any(|p| glob_match(p, &name.name) || qualified.as_deref().is_some_and(|q| glob_match(p, q)))
    }

    /// `schema` without the excluded objects; borrowed as it is when nothing is excluded,
    /// because copying a 5,000-table model on every plan cost more than the diff itself.
    pub fn apply<'a>(&self, schema: &'a Schema) -> Cow<'a, Schema> {
        if self.patterns.is_empty() {
            return Cow::Borrowed(schema);
        }
        let mut out = schema.clone();
        out.tables.retain(|name, _| !self.matches(name));
        out.enums.retain(|name, _| !self.matches(name));
        out.domains.retain(|name, _| !self.matches(name));
        out.views.retain(|name, _| !self.matches(name));
        out.routines.retain(|_, r| !self.matches(&r.name));
        out.triggers.retain(|_, t| !self.matches(&t.table));
        // MySQL's routines, events and view options, by their own names (namespace `""`).
        out.stored_routines
            .retain(|_, r| !self.matches(&QualifiedName::new("", &r.name)));
        out.events.retain(|name, _| !self.matches(name));
        out.view_options
            .retain(|name, _| !self.matches(&QualifiedName::new("", name)));
        Cow::Owned(out)
    }
}

/// Whether `text` matches the glob `pattern` (`*`, `?`, ASCII case ignored).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().map(|c| c.to_ascii_lowercase()).collect();
    let t: Vec<char> = text.chars().map(|c| c.to_ascii_lowercase()).collect();
    let (mut pi, mut ti) = (0, 0);
    // Where the last `*` was and how much text it has swallowed, to backtrack to.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(c) if *c == '?' || *c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}
