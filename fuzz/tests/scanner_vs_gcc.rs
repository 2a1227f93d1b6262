//! Cross-check of the oracle's scanner with GCC's preprocessor (nvcc
//! preprocesses with the host compiler): on mutated corpus files, the
//! number of `#pragma dp` that `g++ -E` executes must lie between the
//! scanner's certain count and its certain + optional count.
//!
//! Slow (one g++ run per file) and needs g++: run it explicitly with
//! `cargo test -p dpopt-fuzz --test scanner_vs_gcc -- --ignored`.

use dpopt_fuzz::mutate::Op;
use dpopt_fuzz::rng::Rng;
use dpopt_fuzz::{scanner, seeds};
use std::io::Write;
use std::process::{Command, Stdio};

/// The file with `#include` lines blanked (g++ has no CUDA headers here).
fn without_includes(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        if line.trim_ascii_start().starts_with(b"#include") {
            out.push(b'\n');
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

/// `#pragma dp` directives in g++'s preprocessed output, or `None` when
/// g++ rejects the file.
fn gcc_count(bytes: &[u8]) -> Option<usize> {
    let mut child = Command::new("g++")
        .args(["-E", "-P", "-x", "c++", "-std=c++17", "-w", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(bytes).ok()?;
    let out = child.wait_with_output().ok()?;
    // The preprocessed text has no splices, macros or conditionals left:
    // the scanner reads its directives reliably.
    out.status
        .success()
        .then(|| scanner::scan(&out.stdout).total())
}

#[test]
#[ignore = "needs g++; slow"]
fn scanner_agrees_with_gcc() {
    if Command::new("g++").arg("--version").output().is_err() {
        eprintln!("no g++: skipped");
        return;
    }
    let corpus = seeds::load(&seeds::default_root());
    let mut rng = Rng::new(11);
    let (mut compared, mut disagreements) = (0, Vec::new());
    for i in 0..3000 {
        let seed = &corpus[rng.below(corpus.len())];
        let mut bytes = without_includes(&seed.bytes);
        let mut ops = Vec::new();
        for _ in 0..rng.range(1, 3) {
            let op = Op::random(&mut rng, &[]);
            if op == Op::LongLine || op == Op::LaunchNestedParens {
                continue;
            }
            let donor = &corpus[rng.below(corpus.len())].bytes;
            if let Some(out) = op.apply(&bytes, donor, &mut rng) {
                bytes = out;
                ops.push(op.name());
            }
        }
        // `#ifdef X` groups are live for dpopt and the scanner, dead for g++
        // without -D: compare files without unknown conditions only.
        let text = String::from_utf8_lossy(&bytes);
        if text.contains("#if") || text.contains("%:if") || text.contains("#\\") {
            continue;
        }
        let Some(gcc) = gcc_count(&bytes) else {
            continue;
        };
        compared += 1;
        let scan = scanner::scan(&bytes);
        if gcc < scan.certain() || gcc > scan.total() {
            let path = std::env::temp_dir().join(format!("scanner-vs-gcc-{i}.cu"));
            let _ = std::fs::write(&path, &bytes);
            disagreements.push(format!(
                "{}: g++ {gcc}, scanner {}..={} ({})",
                path.display(),
                scan.certain(),
                scan.total(),
                ops.join("+")
            ));
        }
    }
    eprintln!("compared {compared} files with g++");
    assert!(compared > 500, "too few files compared: {compared}");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
