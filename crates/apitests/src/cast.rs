//! An asciinema v2 recording (`.cast`) of what a person typed and saw: a JSON header line, then
//! one `[seconds, "o", text]` event per output. The demo records each of its steps into one.
//!
//! Format: <https://docs.asciinema.org/manual/asciicast/v2/>.

use std::{
    path::{Path, PathBuf},
    time::{Instant, SystemTime, UNIX_EPOCH},
};

use serde_json::{Value, json};

/// Terminal size the recordings declare (players wrap longer lines).
const WIDTH: u16 = 120;
const HEIGHT: u16 = 36;

/// One recording in progress; [`Cast::finish`] writes it.
pub struct Cast {
    path: PathBuf,
    header: Value,
    started: Instant,
    events: Vec<(f64, String)>,
}

impl Cast {
    /// Starts a recording that [`Cast::finish`] writes to `path`.
    pub fn start(path: &Path, title: &str) -> Cast {
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Cast {
            path: path.to_owned(),
            header: json!({
                "version": 2, "width": WIDTH, "height": HEIGHT, "timestamp": timestamp,
                "title": title, "env": {"TERM": "xterm-256color", "SHELL": "/bin/bash"}
            }),
            started: Instant::now(),
            events: Vec::new(),
        }
    }

    /// Records `text` as terminal output now; bare `\n` become `\r\n`, as a terminal shows them.
    pub fn output(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let terminal = text.replace("\r\n", "\n").replace('\n', "\r\n");
        self.events.push((self.started.elapsed().as_secs_f64(), terminal));
    }

    /// Records a typed command line after a `$ ` prompt.
    pub fn command(&mut self, line: &str) {
        self.output(&format!("$ {line}\n"));
    }

    /// The recording as asciinema v2 text.
    pub fn render(&self) -> String {
        let mut out = self.header.to_string();
        out.push('\n');
        for (at, text) in &self.events {
            // Millisecond precision is what players use; fewer digits keep the file readable.
            let at = (at * 1000.0).round() / 1000.0;
            out.push_str(&json!([at, "o", text]).to_string());
            out.push('\n');
        }
        out
    }

    /// Writes the recording; returns its path.
    pub fn finish(self) -> std::io::Result<PathBuf> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&self.path, self.render())?;
        Ok(self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_is_a_v2_header_then_ordered_output_events() {
        let mut cast = Cast::start(Path::new("/nonexistent/x.cast"), "first schema");
        cast.command("kubectl get ptahschemas");
        cast.output("NAME     PHASE\norders   InSync\n");
        cast.output("");
        let text = cast.render();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("every line is JSON"))
            .collect();
        assert_eq!(lines.len(), 3, "a header and two events (empty output dropped)");
        assert_eq!(lines[0]["version"], 2);
        assert_eq!(lines[0]["title"], "first schema");
        assert!(lines[0]["width"].as_u64().is_some_and(|w| w > 0));
        assert_eq!(lines[1][1], "o");
        assert_eq!(lines[1][2], "$ kubectl get ptahschemas\r\n");
        assert_eq!(lines[2][2], "NAME     PHASE\r\norders   InSync\r\n");
        let (a, b) = (lines[1][0].as_f64(), lines[2][0].as_f64());
        assert!(a.zip(b).is_some_and(|(a, b)| 0.0 <= a && a <= b), "{a:?} {b:?}");
    }
}
