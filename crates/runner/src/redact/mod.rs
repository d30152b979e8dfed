//! Credential redaction: every known secret, in every form a program may print it
//! ([`forms`]), becomes `[REDACTED]`; a secret cut by a truncation boundary is redacted too.
//!
//! Every occurrence of every form is found first, overlapping ones included, and each run of
//! covered bytes is replaced by one marker: no byte of any occurrence survives, whatever the
//! order of the forms.

mod forms;
mod userinfo;

use std::fmt;

/// What replaces a secret.
pub const MARKER: &str = "[REDACTED]";

/// One form of a secret and which of its bytes match in either case.
#[derive(Clone, PartialEq, Eq)]
struct Form {
    bytes: Vec<u8>,
    fold: Vec<bool>,
}

impl Form {
    fn new(bytes: Vec<u8>) -> Self {
        let fold = forms::fold_mask(&bytes);
        Form { bytes, fold }
    }

    fn byte_matches(&self, i: usize, b: u8) -> bool {
        let f = self.bytes[i];
        f == b || (self.fold[i] && f.eq_ignore_ascii_case(&b))
    }

    /// Whether `hay[at..]` starts with the form's bytes `range`.
    fn part_at(&self, hay: &[u8], at: usize, range: std::ops::Range<usize>) -> bool {
        hay.len() >= at + range.len()
            && range
                .clone()
                .zip(&hay[at..at + range.len()])
                .all(|(i, &b)| self.byte_matches(i, b))
    }

    fn len(&self) -> usize {
        self.bytes.len()
    }
}

/// The set of byte strings to redact.
#[derive(Clone, Default)]
pub struct Redactor {
    forms: Vec<Form>,
}

/// Shows how many forms are known, never one of them.
impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("forms", &self.forms.len())
            .field("values", &format_args!("{MARKER}"))
            .finish()
    }
}

impl Redactor {
    /// A redactor that knows nothing yet.
    pub fn new() -> Self {
        Redactor::default()
    }

    /// Adds a secret in all its printed forms.
    pub fn add_secret(&mut self, secret: &str) {
        if secret.is_empty() {
            return;
        }
        for f in forms::printed(secret) {
            let f = Form::new(f.into_bytes());
            if f.len() > 0 && !self.forms.contains(&f) {
                self.forms.push(f);
            }
        }
        // Longest first: the cut-edge search stops at the first long enough fragment.
        self.forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    }

    /// Adds the credentials a database or registry URL carries: its password and the values of
    /// password-like query parameters. Works on unparseable and misparsed text too.
    pub fn add_url(&mut self, text: &str) {
        for secret in userinfo::secrets(text) {
            self.add_secret(&secret);
        }
    }

    /// True when `bytes` contains a known secret in any form.
    pub fn contains_secret(&self, bytes: &[u8]) -> bool {
        let buckets = self.by_first_byte();
        (0..bytes.len()).any(|at| {
            buckets[usize::from(bytes[at])]
                .iter()
                .any(|&i| self.forms[i].part_at(bytes, at, 0..self.forms[i].len()))
        })
    }

    /// Replaces every occurrence of every form.
    pub fn redact(&self, bytes: &[u8]) -> Vec<u8> {
        self.redact_edges(bytes, false, false)
    }

    /// Redacts text whose end was cut: also a prefix of a secret at the very end.
    pub fn redact_cut_end(&self, bytes: &[u8]) -> Vec<u8> {
        self.redact_edges(bytes, false, true)
    }

    /// Redacts text whose start was cut: also a suffix of a secret at the very start.
    pub fn redact_cut_start(&self, bytes: &[u8]) -> Vec<u8> {
        self.redact_edges(bytes, true, false)
    }

    /// Redacts a string (for messages built by the runner).
    pub fn redact_str(&self, text: &str) -> String {
        String::from_utf8_lossy(&self.redact(text.as_bytes())).into_owned()
    }

    /// For each byte value, the forms that can start with it; a scan then tries only those.
    fn by_first_byte(&self) -> Vec<Vec<usize>> {
        let mut buckets = vec![Vec::new(); 256];
        for (i, f) in self.forms.iter().enumerate() {
            let first = f.bytes[0];
            buckets[usize::from(first)].push(i);
            if f.fold[0] && first.is_ascii_alphabetic() {
                buckets[usize::from(first ^ 0x20)].push(i);
            }
        }
        buckets
    }

    fn redact_edges(&self, bytes: &[u8], cut_start: bool, cut_end: bool) -> Vec<u8> {
        let mut covered = vec![false; bytes.len()];
        let mut cover = |from: usize, to: usize| covered[from..to].iter_mut().for_each(|c| *c = true);
        let buckets = self.by_first_byte();
        for at in 0..bytes.len() {
            for &i in &buckets[usize::from(bytes[at])] {
                let n = self.forms[i].len();
                if self.forms[i].part_at(bytes, at, 0..n) {
                    cover(at, at + n);
                }
            }
        }
        for f in &self.forms {
            let n = f.len();
            // A proper part of a form at a cut edge: the rest of it was cut off.
            if cut_start
                && let Some(k) = (1..n.min(bytes.len() + 1))
                    .rev()
                    .find(|&k| f.part_at(bytes, 0, n - k..n))
            {
                cover(0, k);
            }
            if cut_end
                && let Some(k) = (1..n.min(bytes.len() + 1))
                    .rev()
                    .find(|&k| f.part_at(bytes, bytes.len() - k, 0..k))
            {
                cover(bytes.len() - k, bytes.len());
            }
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if covered[i] {
                out.extend_from_slice(MARKER.as_bytes());
                while i < bytes.len() && covered[i] {
                    i += 1;
                }
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_a_url_password_is_redacted() {
        let mut r = Redactor::new();
        r.add_url("postgres://app:p%40ss%2Fw0rd%22x@db/app?sslpassword=other-secret");
        for form in [
            "p@ss/w0rd\"x",
            "p%40ss%2Fw0rd%22x",
            "p%40ss%2fw0rd%22x",
            "p@ss/w0rd\\\"x",
            "other-secret",
        ] {
            let out = r.redact(format!("before {form} after").as_bytes());
            assert_eq!(
                String::from_utf8_lossy(&out),
                format!("before {MARKER} after"),
                "{form}"
            );
        }
    }

    #[test]
    fn a_cut_secret_is_redacted_at_either_edge() {
        let mut r = Redactor::new();
        r.add_secret("supersecret");
        assert_eq!(r.redact_cut_end(b"log: supers"), b"log: [REDACTED]");
        assert_eq!(r.redact_cut_start(b"ecret and more"), b"[REDACTED] and more");
        assert_eq!(r.redact_cut_end(b"nothing here"), b"nothing here");
    }

    #[test]
    fn overlapping_occurrences_leave_no_byte_behind() {
        let mut r = Redactor::new();
        r.add_secret("abcabc");
        r.add_secret("cab");
        assert_eq!(r.redact(b"xabcabcabcx"), b"x[REDACTED]x");
        assert_eq!(
            r.redact(b"%2F and %2f"),
            b"%2F and %2f",
            "no secret, nothing folded"
        );
    }
}
