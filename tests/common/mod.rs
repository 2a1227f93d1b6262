//! Helpers shared by the integration tests.
#![allow(dead_code)]

use dpopt::source::SourceFile;
use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every annotated CUDA program shipped with the project: the examples and
/// the hazard fixtures.
pub fn corpus() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["examples", "tests/fixtures"] {
        if let Ok(entries) = std::fs::read_dir(root().join(dir)) {
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "cu") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    files
}

pub fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// The path as a name relative to the repository (stable in snapshots).
pub fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

pub fn load(path: &Path) -> SourceFile {
    SourceFile::new(
        relative(path),
        std::fs::read(path).expect("read test input"),
    )
}

/// dpopt as the command line runs it, with tests/fixtures as an include
/// directory (header_child.cu's children are in a header there).
pub fn transform_with_headers(file: &SourceFile, output_name: &str) -> dpopt::Outcome {
    let options = dpopt::unit::Options {
        include_dirs: vec![root().join("tests/fixtures")],
        ..Default::default()
    };
    dpopt::run_with(file, Some(&options), output_name, true)
}

pub fn transform_bytes(name: &str, bytes: &[u8]) -> dpopt::Outcome {
    let file = SourceFile::new(name, bytes.to_vec());
    dpopt::run(&file, "out.cu", true)
}

/// Replace every `#pragma dp ...` line (with continuations) by `pragma`.
pub fn with_pragmas(text: &str, pragma: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#pragma dp") {
            let mut current = line;
            while current.trim_end().ends_with('\\') {
                match lines.next() {
                    Some(next) => current = next,
                    None => break,
                }
            }
            let ending = if line.ends_with("\r\n") { "\r\n" } else { "\n" };
            out.push_str(pragma);
            out.push_str(ending);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// nvcc from `DPOPT_NVCC`, the project's pip-installed toolchain
/// (`scripts/setup-nvcc.sh`), or PATH.
pub fn nvcc() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("DPOPT_NVCC") {
        return Some(PathBuf::from(p));
    }
    let venv = root().join(".venv-nvcc/lib");
    if let Ok(entries) = std::fs::read_dir(&venv) {
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

/// Append `suffix` to every `#pragma dp` directive (after its continuation
/// lines), keeping the line endings.
pub fn append_to_pragmas(text: &str, suffix: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut in_pragma = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let starts = body.trim_start().starts_with("#pragma dp");
        if starts || in_pragma {
            if body.trim_end().ends_with('\\') {
                in_pragma = true;
                out.push_str(line);
                continue;
            }
            in_pragma = false;
            out.push_str(body);
            out.push_str(suffix);
            out.push_str(ending);
        } else {
            out.push_str(line);
        }
    }
    out
}
