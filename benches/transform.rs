//! How fast is dpopt? Two questions (issue 2):
//!
//! 1. Cost relative to nvcc: transforming a file must cost under 2% of
//!    nvcc's compile time for the same (transformed) file.
//! 2. Scaling: time must grow linearly with input size.
//!
//! Run with `cargo bench --bench transform`. nvcc is taken from DPOPT_NVCC,
//! `.venv-nvcc` (scripts/setup-nvcc.sh) or PATH; without it only (2) runs.

use dpopt::source::SourceFile;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_transform(name: &str, bytes: &[u8], reps: usize) -> Duration {
    let file = SourceFile::new(name, bytes.to_vec());
    median(
        (0..reps)
            .map(|_| {
                let start = Instant::now();
                let outcome = dpopt::run(&file, "out.cu", true);
                let elapsed = start.elapsed();
                assert!(outcome.output.is_some(), "{name} did not transform");
                elapsed
            })
            .collect(),
    )
}

fn nvcc() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("DPOPT_NVCC") {
        return Some(PathBuf::from(p));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_dir(root.join(".venv-nvcc/lib"))
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/nvidia/cu13/bin/nvcc"))
        .find(|p| p.exists())
}

/// The file repeated `k` times, kernels renamed so that each copy is a
/// distinct program part (one `main` kept).
fn replicate(text: &str, kernels: &[&str], k: usize) -> String {
    let mut out = String::with_capacity(text.len() * k);
    for i in 0..k {
        let mut copy = text.to_string();
        for kernel in kernels {
            copy = copy.replace(kernel, &format!("{kernel}_{i}"));
        }
        if i > 0 {
            copy = copy.replace("int main(", &format!("int main_{i}("));
        }
        out.push_str(&copy);
    }
    out
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    println!("== dpopt transform time vs nvcc compile time (median) ==");
    println!(
        "{:<16} {:>10} {:>12} {:>12} {:>8}",
        "file", "bytes", "dpopt", "nvcc -c", "ratio"
    );
    let nvcc = nvcc();
    let mut worst: f64 = 0.0;
    for name in ["bfs", "tree_heights", "bezier"] {
        let path = root.join(format!("examples/{name}.cu"));
        let bytes = std::fs::read(&path).unwrap();
        let t = time_transform(name, &bytes, 50);
        let (nv, ratio) = match &nvcc {
            Some(nvcc) => {
                let dir = tempfile::tempdir().unwrap();
                let out = dir.path().join(format!("{name}.dp.cu"));
                let file = SourceFile::new(name, bytes.clone());
                std::fs::write(&out, dpopt::run(&file, "out.cu", true).output.unwrap()).unwrap();
                let nv = median(
                    (0..3)
                        .map(|_| {
                            let start = Instant::now();
                            let status = Command::new(nvcc)
                                .args(["-rdc=true", "-arch=sm_90", "-O3", "-c", "-o"])
                                .arg(dir.path().join("x.o"))
                                .arg(&out)
                                .status()
                                .unwrap();
                            assert!(status.success());
                            start.elapsed()
                        })
                        .collect(),
                );
                let ratio = t.as_secs_f64() / nv.as_secs_f64();
                worst = worst.max(ratio);
                (
                    format!("{:.0} ms", nv.as_secs_f64() * 1e3),
                    format!("{:.3}%", ratio * 100.0),
                )
            }
            None => ("-".to_string(), "-".to_string()),
        };
        println!(
            "{:<16} {:>10} {:>9.3} ms {:>12} {:>8}",
            name,
            bytes.len(),
            t.as_secs_f64() * 1e3,
            nv,
            ratio
        );
    }
    if nvcc.is_some() {
        println!(
            "worst ratio {:.3}% (target < 2%): {}",
            worst * 100.0,
            if worst < 0.02 { "PASS" } else { "FAIL" }
        );
    } else {
        println!("nvcc not found: ratio not measured");
    }

    println!("\n== scaling with input size (bfs.cu replicated k times) ==");
    println!(
        "{:>6} {:>12} {:>12} {:>10}",
        "k", "bytes", "time", "ns/byte"
    );
    let text = std::fs::read_to_string(root.join("examples/bfs.cu")).unwrap();
    let mut per_byte = Vec::new();
    for k in [1usize, 4, 16, 64, 256] {
        let big = replicate(&text, &["bfs_child", "bfs_parent", "bfs_flat"], k);
        let reps = if k >= 64 { 5 } else { 20 };
        let t = time_transform("big.cu", big.as_bytes(), reps);
        let ns = t.as_secs_f64() * 1e9 / big.len() as f64;
        per_byte.push(ns);
        println!(
            "{:>6} {:>12} {:>9.3} ms {:>10.1}",
            k,
            big.len(),
            t.as_secs_f64() * 1e3,
            ns
        );
    }
    let spread = per_byte.iter().cloned().fold(f64::MIN, f64::max)
        / per_byte.iter().cloned().fold(f64::MAX, f64::min);
    println!(
        "ns/byte max/min = {:.2} over a {}x size range: {}",
        spread,
        256,
        if spread < 2.0 { "linear" } else { "NOT LINEAR" }
    );
}
