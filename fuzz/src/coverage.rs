//! SanitizerCoverage feedback on stable Rust.
//!
//! When dpopt is compiled with `-C passes=sancov-module -C
//! llvm-args=-sanitizer-coverage-level=3 -C
//! llvm-args=-sanitizer-coverage-inline-8bit-counters` (stable `-C` flags;
//! `fuzz/cov-rustc.sh` adds them to the `dpopt` crate only), every module of
//! dpopt registers its edge counters at start-up through
//! `__sanitizer_cov_8bit_counters_init`, which the `dpopt-fuzz` binary
//! defines and forwards to [`register`]. The worker zeroes the counters
//! before a case and turns the non-zero ones into features after it.
//! Without instrumentation nothing registers and the campaign falls back to
//! its behavioural signature alone.

use std::sync::Mutex;

/// Counter regions: (start address, length).
static REGIONS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Record a counter region (called from the sanitizer callback).
///
/// # Safety
/// `start..end` must be a counter array that stays valid for the life of
/// the process, as SanitizerCoverage guarantees.
pub unsafe fn register(start: *mut u8, end: *mut u8) {
    let len = (end as usize).saturating_sub(start as usize);
    if len > 0 {
        if let Ok(mut r) = REGIONS.lock() {
            r.push((start as usize, len));
        }
    }
}

/// Whether any counters were registered.
pub fn enabled() -> bool {
    REGIONS.lock().map(|r| !r.is_empty()).unwrap_or(false)
}

/// Zero every counter.
pub fn reset() {
    if let Ok(regions) = REGIONS.lock() {
        for &(start, len) in regions.iter() {
            // SAFETY: a registered counter region (see `register`); only the
            // calling thread runs instrumented code between reset and collect.
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, len) };
        }
    }
}

/// The features hit since `reset`: counter index and hit-count bucket.
pub fn collect() -> Vec<u32> {
    let mut features = Vec::new();
    let Ok(regions) = REGIONS.lock() else {
        return features;
    };
    let mut base = 0u32;
    for &(start, len) in regions.iter() {
        // SAFETY: as in `reset`.
        let counters = unsafe { std::slice::from_raw_parts(start as *const u8, len) };
        for (i, &c) in counters.iter().enumerate() {
            if c != 0 {
                let bucket = match c {
                    1 => 0,
                    2 => 1,
                    3 => 2,
                    4..=7 => 3,
                    8..=15 => 4,
                    16..=31 => 5,
                    32..=127 => 6,
                    _ => 7,
                };
                features.push((base + i as u32) << 3 | bucket);
            }
        }
        base += len as u32;
    }
    features
}
