//! Writing the result: diagnostics on stderr first (prefixed and bounded, [`crate::diagnostics`]),
//! then the frame as the last stdout output in one write, and the termination summary.

use std::{io::Write, path::Path};

use ptah_dataplane::{
    ErrorCode, ResultPayload,
    frame::{encode_frame, frame_bytes},
    summary::Summary,
};
use ptah_fingerprint::Digest;

use crate::{
    diagnostics::{self, Notes},
    redact::Redactor,
    report::failure,
};

/// The frame for a payload; a payload that breaks an invariant (a runner bug) is replaced by an
/// `internal` error that keeps the conservative mutation flags.
pub fn frame_for(payload: &ResultPayload) -> (Vec<u8>, Digest, ResultPayload) {
    match encode_frame(payload) {
        Ok((frame, digest)) => (frame, digest, payload.clone()),
        Err(err) => {
            let mut safe = ResultPayload::new(payload.operation, payload.operation_id.clone());
            safe.child_exit_code = payload.child_exit_code;
            if payload.operation.is_mutating() && payload.child_exit_code != -1 {
                safe.mutation_started = Some(true);
                safe.uncertain = Some(true);
            }
            let message = format!("the runner produced an invalid result: {err}");
            safe.error = Some(failure(ErrorCode::Internal, None, &message, &Redactor::new()));
            let line = serde_json::to_vec(&safe).unwrap_or_default();
            let digest = Digest::of(&line);
            (frame_bytes(&line), digest, safe)
        }
    }
}

/// What one run writes: the diagnostics for stderr, then the frame for stdout.
#[derive(Debug)]
pub struct Rendered {
    /// The diagnostic lines, written to stderr before the frame.
    pub stderr: Vec<u8>,
    /// The frame, written to stdout in one write.
    pub frame: Vec<u8>,
    /// The sha256 of the frame's payload line.
    pub digest: Digest,
    /// The payload the frame carries.
    pub written: ResultPayload,
}

/// Renders the diagnostics and the frame of a run without writing anything. The diagnostics are
/// redacted first and bounded afterwards, so redaction cannot push them past the bound.
pub fn render(payload: &ResultPayload, diagnostics: Option<&[u8]>, redactor: &Redactor) -> Rendered {
    let stderr = diagnostics.map_or_else(Vec::new, |d| diagnostics::render(&redactor.redact(d)));
    let (frame, digest, written) = frame_for(payload);
    Rendered {
        stderr,
        frame,
        digest,
        written,
    }
}

/// Writes diagnostics, the frame and the summary. Returns the payload actually written.
pub fn emit(
    payload: &ResultPayload,
    diagnostics: Option<&[u8]>,
    redactor: &Redactor,
    termination_log: &Path,
) -> ResultPayload {
    let Rendered {
        stderr,
        frame,
        digest,
        written,
    } = render(payload, diagnostics, redactor);
    if !stderr.is_empty() {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(&stderr);
        let _ = err.flush();
    }
    let mut notes = Notes::default();
    let mut out = std::io::stdout().lock();
    if out.write_all(&frame).and_then(|()| out.flush()).is_err() {
        notes.write("cannot write the result frame to stdout");
    }
    write_summary(&written, digest, termination_log, &mut notes);
    written
}

/// Writes what a durably delivered run leaves behind, with no frame: the diagnostics, one note on
/// the delivery (`note`) and the termination summary naming the body's `digest`.
pub fn emit_delivered(
    written: &ResultPayload,
    diagnostics: Option<&[u8]>,
    redactor: &Redactor,
    termination_log: &Path,
    digest: Digest,
    note: &str,
) {
    let stderr = diagnostics.map_or_else(Vec::new, |d| diagnostics::render(&redactor.redact(d)));
    if !stderr.is_empty() {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(&stderr);
        let _ = err.flush();
    }
    let mut notes = Notes::default();
    notes.write(&String::from_utf8_lossy(&redactor.redact(note.as_bytes())));
    write_summary(written, digest, termination_log, &mut notes);
}

fn write_summary(written: &ResultPayload, digest: Digest, termination_log: &Path, notes: &mut Notes) {
    match Summary::of(written, digest).to_line() {
        Ok(line) => {
            if let Err(e) = std::fs::write(termination_log, format!("{line}\n")) {
                notes.write(&format!(
                    "cannot write {}: {}",
                    termination_log.display(),
                    e.kind()
                ));
            }
        }
        Err(e) => notes.write(&format!("no termination summary: {e}")),
    }
}
