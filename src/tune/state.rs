//! The search's state file next to the input (`FILE.cu.dpopt-tune.json`):
//! every measurement made, so that an interrupted search resumes where it
//! stopped (the search replays against it without running anything).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// What the measurements depend on (the input, the commands, the
    /// metric): a state with another fingerprint is not reused.
    pub fingerprint: String,
    /// `point key#sample` -> the value, or the reason it was excluded.
    pub measurements: BTreeMap<String, Result<f64, String>>,
    /// Build key -> why the build failed.
    pub failed_builds: BTreeMap<String, String>,
    /// The stats run's counters per site (`requested`, `direct`, ...).
    pub stats: Option<BTreeMap<String, BTreeMap<String, u64>>>,
}

impl State {
    pub fn path_for(input: &Path) -> PathBuf {
        let mut name = input.file_name().unwrap_or_default().to_os_string();
        name.push(".dpopt-tune.json");
        input.with_file_name(name)
    }

    /// The state saved for `fingerprint`, or a fresh one.
    pub fn load(path: &Path, fingerprint: &str) -> (State, bool) {
        let saved = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice::<State>(&b).ok())
            .filter(|s| s.fingerprint == fingerprint);
        match saved {
            Some(s) => (s, true),
            None => (
                State {
                    fingerprint: fingerprint.to_string(),
                    ..State::default()
                },
                false,
            ),
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        crate::output::write_atomically(path, &bytes)
    }

    pub fn key(point_key: &str, sample: u32) -> String {
        format!("{point_key}#{sample}")
    }
}

/// A stable hash (FNV-1a, 64 bits) of the parts, as hex.
pub fn fingerprint(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for part in parts {
        for b in part.iter().chain(&[0xff]) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}
