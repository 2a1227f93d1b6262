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

/// dpopt as the command line runs it, with tests/fixtures and tests/corpus
/// as include directories (the header_child programs' children are in
/// headers there).
pub fn transform_with_headers(file: &SourceFile, output_name: &str) -> dpopt::Outcome {
    let options = dpopt::unit::Options {
        include_dirs: vec![root().join("tests/fixtures"), root().join("tests/corpus")],
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

/// A promoted program with `promote` (e.g. `#pragma dp promote(basic)`) on
/// every promoted launch instead of its own clauses; without `overlap`, every
/// `#pragma dp acquire` becomes an empty line (the lines keep their numbers).
pub fn with_promotion(text: &str, promote: &str, overlap: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let trimmed = body.trim();
        if trimmed.starts_with("#pragma dp promote") {
            out.push_str(promote);
            out.push_str(ending);
        } else if trimmed == "#pragma dp acquire" && !overlap {
            out.push_str(ending);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The examples whose launches are promoted (`#pragma dp promote(...)`):
/// their pragmas are promotion variants, not the clause sets of the others.
pub fn is_promoted(text: &str) -> bool {
    text.contains("#pragma dp promote")
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

/// Report a test that needs a tool this machine lacks: a line on the
/// terminal (written past the test harness's capture), and the test passes.
/// Where the tools are expected (`DPOPT_REQUIRE_NVCC=1`, which `.ci/run`
/// sets after installing them) a missing tool fails the test instead.
pub fn skip(test: &str, why: &str) {
    if std::env::var("DPOPT_REQUIRE_NVCC").as_deref() == Ok("1") {
        panic!("{test}: {why}, and DPOPT_REQUIRE_NVCC=1 says it must be there");
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: {why} (scripts/setup-nvcc.sh installs nvcc and CMake)"
    );
}

/// nvcc for a test that compiles with it, or `None` after `skip` said so.
pub fn nvcc_or_skip(test: &str) -> Option<PathBuf> {
    let nvcc = nvcc();
    if nvcc.is_none() {
        skip(test, "nvcc not found (nor DPOPT_NVCC set)");
    }
    nvcc
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

/// The corpus programs (`tests/corpus/*.cu`): written as real code bases
/// write CDP code, with what tests/corpus/expected.txt says dpopt does with
/// each of them in each variant of `CORPUS_VARIANTS`.
pub fn corpus_programs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/corpus"))
        .expect("tests/corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    files
}

/// The corpus variants: each replaces every `#pragma dp` line of a program
/// (`None`: the program as annotated). bench/gpu_check.sh uses the same list.
pub const CORPUS_VARIANTS: [(&str, Option<&str>); 12] = [
    ("as-annotated", None),
    ("T", Some("#pragma dp threshold(128)")),
    ("C", Some("#pragma dp coarsen(8)")),
    ("TC", Some("#pragma dp threshold(128) coarsen(8)")),
    ("Aw", Some("#pragma dp consldt(warp)")),
    ("Ab", Some("#pragma dp consldt(block)")),
    ("Am", Some("#pragma dp consldt(multiblock, 8)")),
    ("Ag", Some("#pragma dp consldt(grid)")),
    (
        "TCAw",
        Some("#pragma dp threshold(128) coarsen(8) consldt(warp)"),
    ),
    (
        "TCAb",
        Some("#pragma dp threshold(128) coarsen(8) consldt(block)"),
    ),
    (
        "TCAm",
        Some("#pragma dp threshold(128) coarsen(8) consldt(multiblock, 8)"),
    ),
    (
        "TCAg",
        Some("#pragma dp threshold(128) coarsen(8) consldt(grid)"),
    ),
];

/// What dpopt does with one corpus program in one variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorpusOutcome {
    /// Transformed, and nvcc compiles the output.
    Ok,
    /// Transformed, but nvcc rejects the output (tests/corpus/PROBLEMS.md).
    OkNvccFails,
    /// Refused with this diagnostic code (`dpopt::...`).
    Refused(String),
}

/// One line of tests/corpus/expected.txt: `PROGRAM VARIANT OUTCOME`.
#[derive(Debug, Clone)]
pub struct CorpusExpectation {
    pub program: String,
    pub variant: String,
    pub outcome: CorpusOutcome,
    pub line: usize,
}

/// tests/corpus/expected.txt (`#` starts a comment line).
pub fn corpus_expectations() -> Vec<CorpusExpectation> {
    let text = std::fs::read_to_string(root().join("tests/corpus/expected.txt"))
        .expect("tests/corpus/expected.txt");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let outcome = match fields[..] {
            [_, _, "ok"] => CorpusOutcome::Ok,
            [_, _, "ok-nvcc-fails"] => CorpusOutcome::OkNvccFails,
            [_, _, "refused", code] if code.starts_with("dpopt::") => {
                CorpusOutcome::Refused(code.to_string())
            }
            _ => panic!("tests/corpus/expected.txt:{line_no}: malformed line `{line}`"),
        };
        out.push(CorpusExpectation {
            program: fields[0].to_string(),
            variant: fields[1].to_string(),
            outcome,
            line: line_no,
        });
    }
    out
}

/// The text of corpus program `program` in variant `variant`.
pub fn corpus_variant(program: &str, variant: &str) -> Vec<u8> {
    let path = root().join("tests/corpus").join(format!("{program}.cu"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let pragma = CORPUS_VARIANTS
        .iter()
        .find(|(name, _)| *name == variant)
        .unwrap_or_else(|| panic!("unknown corpus variant `{variant}`"))
        .1;
    match pragma {
        None => bytes,
        Some(p) => with_pragmas(&String::from_utf8(bytes).unwrap(), p).into_bytes(),
    }
}

/// The CDP1 programs of tests/postwork/ (device-side waits, migrated with
/// `--migrate-sync`).
pub fn postwork_programs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/postwork"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "cu"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// dpopt as `transform --migrate-sync` runs it (headers read next to the
/// input and in examples/, for examples/common/tree.h).
pub fn migrate(file: &SourceFile, output_name: &str, migrate: bool) -> dpopt::Outcome {
    let options = dpopt::unit::Options {
        include_dirs: vec![root().join("examples")],
        ..Default::default()
    };
    dpopt::run_migrating(file, Some(&options), migrate, output_name, true)
}
