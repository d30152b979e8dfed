//! The Kubernetes minors this release supports: the window of `matrix/kubernetes.json`, the same
//! file the acceptance matrix runs and the chart's `kubeVersion` is derived from.

use serde::Deserialize;

use crate::error::{Error, Refusal};

/// `matrix/kubernetes.json` as built into this binary.
const MATRIX: &str = include_str!("../../../matrix/kubernetes.json");

/// An inclusive range of `1.<minor>` releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupportWindow {
    /// The oldest supported minor.
    pub oldest: u32,
    /// The newest supported minor.
    pub newest: u32,
}

#[derive(Deserialize)]
struct Matrix {
    minors: Vec<Minor>,
}

#[derive(Deserialize)]
struct Minor {
    minor: String,
}

impl SupportWindow {
    /// The window of the matrix this binary was built with.
    pub fn built_in() -> Result<SupportWindow, Error> {
        SupportWindow::from_matrix(MATRIX).map_err(Error::Build)
    }

    /// The window of a `matrix/kubernetes.json` document: its oldest to its newest minor.
    pub fn from_matrix(text: &str) -> Result<SupportWindow, String> {
        let matrix: Matrix =
            serde_json::from_str(text).map_err(|e| format!("matrix/kubernetes.json: {e}"))?;
        let minors = matrix
            .minors
            .iter()
            .map(|m| parse_minor(&m.minor).ok_or_else(|| format!("matrix minor {:?} is not 1.<n>", m.minor)))
            .collect::<Result<Vec<u32>, String>>()?;
        match (minors.iter().min(), minors.iter().max()) {
            (Some(&oldest), Some(&newest)) => Ok(SupportWindow { oldest, newest }),
            _ => Err("matrix/kubernetes.json lists no minor".to_owned()),
        }
    }

    /// Refuses a server outside the window; `major`/`minor` as `/version` reports them (a
    /// provider suffix such as `35+` is allowed).
    pub fn check(&self, major: &str, minor: &str) -> Result<(), Refusal> {
        let digits: String = minor.chars().take_while(char::is_ascii_digit).collect();
        let inside = major == "1"
            && digits
                .parse::<u32>()
                .is_ok_and(|m| (self.oldest..=self.newest).contains(&m));
        if inside {
            Ok(())
        } else {
            Err(Refusal::UnsupportedMinor {
                server: format!("{major}.{minor}"),
                window: self.to_string(),
            })
        }
    }
}

impl std::fmt::Display for SupportWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "1.{}–1.{}", self.oldest, self.newest)
    }
}

fn parse_minor(text: &str) -> Option<u32> {
    text.strip_prefix("1.")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_window_spans_the_matrix() {
        let window = SupportWindow::built_in().expect("the matrix parses");
        assert!(window.oldest <= window.newest);
        assert!(window.check("1", &window.oldest.to_string()).is_ok());
        assert!(window.check("1", &format!("{}+", window.newest)).is_ok());
    }

    #[test]
    fn outside_the_window_is_refused_with_both_versions() {
        let window =
            SupportWindow::from_matrix(r#"{"minors":[{"minor":"1.36"},{"minor":"1.35"},{"minor":"1.37"}]}"#)
                .expect("parse");
        assert_eq!(
            window,
            SupportWindow {
                oldest: 35,
                newest: 37
            }
        );
        for (major, minor) in [("1", "34"), ("1", "38"), ("2", "35"), ("1", ""), ("1", "x")] {
            let refusal = window.check(major, minor).expect_err("outside");
            assert!(refusal.to_string().contains("1.35–1.37"), "{refusal}");
        }
        assert_eq!(
            SupportWindow::from_matrix(r#"{"minors":[]}"#),
            Err("matrix/kubernetes.json lists no minor".to_owned())
        );
        assert_eq!(
            SupportWindow::from_matrix(r#"{"minors":[{"minor":"v1.35"}]}"#),
            Err("matrix minor \"v1.35\" is not 1.<n>".to_owned())
        );
    }
}
