//! The nvcc sample: compile an input and its output with a real nvcc. Only
//! an output whose original compiles counts.

use crate::oracle::run_with_timeout;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Nvcc {
    pub exe: PathBuf,
    /// `-I` directory (the repository's `examples`, for `common/*.h`).
    pub include: PathBuf,
    pub scratch: PathBuf,
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compiled {
    Ok,
    /// nvcc's first error lines.
    Rejected(String),
    /// Could not tell (timeout, nvcc missing).
    Inconclusive(String),
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl Nvcc {
    /// `DPOPT_NVCC`, the project's pip-installed toolchain
    /// (`scripts/setup-nvcc.sh`) under `root`, or `nvcc` on PATH.
    pub fn find(root: &Path) -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("DPOPT_NVCC") {
            return Some(PathBuf::from(p));
        }
        if let Ok(entries) = std::fs::read_dir(root.join(".venv-nvcc/lib")) {
            for e in entries.flatten() {
                let candidate = e.path().join("site-packages/nvidia/cu13/bin/nvcc");
                if candidate.exists() {
                    return Some(candidate);
                }
            }
        }
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("nvcc"))
                .find(|p| p.exists())
        })
    }

    /// `nvcc -rdc=true -arch=sm_90 -I INCLUDE -c NAME`.
    pub fn compile(&self, name: &str, bytes: &[u8]) -> Compiled {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = self.scratch.join(format!("nvcc-{n}"));
        if let Err(e) =
            std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join(name), bytes))
        {
            return Compiled::Inconclusive(format!("cannot write: {e}"));
        }
        let result = run_with_timeout(
            Command::new(&self.exe)
                .args(["-rdc=true", "-arch=sm_90", "-I"])
                .arg(&self.include)
                .args(["-c", name, "-o", "x.o"])
                .current_dir(&dir),
            self.timeout,
        );
        let _ = std::fs::remove_dir_all(&dir);
        match result {
            Err(e) => Compiled::Inconclusive(format!("cannot run nvcc: {e}")),
            Ok(None) => Compiled::Inconclusive(format!("nvcc ran longer than {:?}", self.timeout)),
            Ok(Some(f)) if f.code == Some(0) => Compiled::Ok,
            Ok(Some(f)) => {
                let all = format!("{}{}", f.stderr_head, f.stderr_tail);
                let errors: Vec<&str> = all
                    .lines()
                    .filter(|l| l.contains("error"))
                    .take(2)
                    .collect();
                Compiled::Rejected(if errors.is_empty() {
                    all.lines().last().unwrap_or("").to_string()
                } else {
                    errors.join(" | ")
                })
            }
        }
    }
}
