//! The runner computes a target identity from a URL it is handed before anything else runs: no
//! input may panic it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ptah_dataplane::TargetIdentity::from_url(text);
    }
});
