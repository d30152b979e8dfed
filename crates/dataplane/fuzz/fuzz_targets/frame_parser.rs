//! The manager parses frames out of pod logs it does not control: no input may panic the parser,
//! and whatever it accepts must satisfy the payload invariants it promises.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|log: &[u8]| {
    let _ = ptah_dataplane::parse_last_frame(log);
});
