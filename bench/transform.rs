//! How fast is dpopt (`cargo bench --bench transform`, divan)? Two
//! questions:
//!
//! 1. Cost relative to nvcc: transforming a file must cost well under 2% of
//!    nvcc's compile time for the same (transformed) file: compare
//!    `transform` with `nvcc_compile` for each example. nvcc is taken from
//!    DPOPT_NVCC, `.venv-nvcc` (scripts/setup-nvcc.sh) or PATH; without it
//!    `nvcc_compile` says so and measures nothing.
//! 2. Scaling: time must grow linearly with input size: `scaling` transforms
//!    bfs.cu replicated k times, and divan's throughput (bytes per second)
//!    must stay flat as k grows.

use divan::counter::BytesCount;
use divan::Bencher;
use dpopt::source::SourceFile;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXAMPLES: &[&str] = &["bfs", "tree_heights", "bezier"];

fn main() {
    divan::main();
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn example(name: &str) -> Vec<u8> {
    std::fs::read(root().join(format!("examples/{name}.cu"))).unwrap()
}

fn transformed(name: &str, bytes: &[u8]) -> Vec<u8> {
    let file = SourceFile::new(name, bytes.to_vec());
    dpopt::run(&file, "out.cu", true)
        .output
        .unwrap_or_else(|| panic!("{name} did not transform"))
}

/// `dpopt::run` on one example, as `dpopt transform` runs it.
#[divan::bench(args = EXAMPLES)]
fn transform(bencher: Bencher, name: &str) {
    let file = SourceFile::new(name, example(name));
    bencher
        .counter(BytesCount::new(file.bytes.len()))
        .bench(|| dpopt::run(divan::black_box(&file), "out.cu", true));
}

fn nvcc() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("DPOPT_NVCC") {
        return Some(PathBuf::from(p));
    }
    std::fs::read_dir(root().join(".venv-nvcc/lib"))
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/nvidia/cu13/bin/nvcc"))
        .find(|p| p.exists())
}

/// nvcc compiling the transformed example for sm_90: the time
/// `transform` is compared with.
#[divan::bench(args = EXAMPLES, sample_count = 3, sample_size = 1)]
fn nvcc_compile(bencher: Bencher, name: &str) {
    let Some(nvcc) = nvcc() else {
        eprintln!("nvcc_compile: nvcc not found (scripts/setup-nvcc.sh installs it); not measured");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join(format!("{name}.dp.cu"));
    std::fs::write(&source, transformed(name, &example(name))).unwrap();
    let object = dir.path().join("x.o");
    bencher.bench(|| {
        let status = Command::new(&nvcc)
            .args(["-rdc=true", "-arch=sm_90", "-O3", "-c", "-I"])
            // The examples include their shared host code as "common/...".
            .arg(root().join("examples"))
            .arg("-o")
            .arg(&object)
            .arg(&source)
            .status()
            .unwrap();
        assert!(status.success(), "nvcc failed on {name}");
    });
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

/// bfs.cu replicated `k` times: bytes per second must not fall with `k`.
#[divan::bench(args = [1, 4, 16, 64, 256])]
fn scaling(bencher: Bencher, k: usize) {
    let text = String::from_utf8(example("bfs")).unwrap();
    let big = replicate(&text, &["bfs_child", "bfs_parent", "bfs_flat"], k);
    let file = SourceFile::new("big.cu", big.into_bytes());
    assert!(transformed("big.cu", &file.bytes).len() > file.bytes.len());
    bencher
        .counter(BytesCount::new(file.bytes.len()))
        .bench(|| dpopt::run(divan::black_box(&file), "out.cu", true));
}
