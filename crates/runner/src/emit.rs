//! Writing the result: diagnostics on stderr first, then the frame as the last stdout output in
//! one write, and the termination summary.

use std::{io::Write, path::Path};

use ptah_dataplane::{
    ErrorCode, ResultPayload,
    frame::{encode_frame, frame_bytes},
    summary::Summary,
};
use ptah_fingerprint::Digest;

use crate::{redact::Redactor, report::failure};

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

/// Writes diagnostics, the frame and the summary. Returns the payload actually written.
pub fn emit(
    payload: &ResultPayload,
    diagnostics: Option<&[u8]>,
    redactor: &Redactor,
    termination_log: &Path,
) -> ResultPayload {
    if let Some(d) = diagnostics.filter(|d| !d.is_empty()) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(&redactor.redact(d));
        let _ = err.write_all(b"\n");
        let _ = err.flush();
    }
    let (frame, digest, written) = frame_for(payload);
    let mut out = std::io::stdout().lock();
    if out.write_all(&frame).and_then(|()| out.flush()).is_err() {
        eprintln!("ptah-runner: cannot write the result frame to stdout");
    }
    match Summary::of(&written, digest).to_line() {
        Ok(line) => {
            if let Err(e) = std::fs::write(termination_log, format!("{line}\n")) {
                eprintln!(
                    "ptah-runner: cannot write {}: {}",
                    termination_log.display(),
                    e.kind()
                );
            }
        }
        Err(e) => eprintln!("ptah-runner: no termination summary: {e}"),
    }
    written
}
