//! The corpus (tests/corpus/): small complete CDP programs written the way
//! real code bases write them. For every program in every variant (each
//! replaces all `#pragma dp` lines of the program: tests/common
//! `CORPUS_VARIANTS`), tests/corpus/expected.txt records what dpopt does:
//! `ok` (transformed), `refused dpopt::CODE`, or `ok-nvcc-fails`
//! (transformed, but nvcc rejects the output: tests/corpus/PROBLEMS.md).
//! tests/nvcc.rs compiles the `ok` ones; bench/gpu_check.sh runs them.

mod common;

use common::{CorpusOutcome, CORPUS_VARIANTS};
use std::collections::BTreeSet;

/// expected.txt has exactly one line per program and variant, for every
/// program in tests/corpus/ and no other.
#[test]
fn every_program_and_variant_is_listed() {
    let programs: BTreeSet<String> = common::corpus_programs()
        .iter()
        .map(|p| common::stem(p))
        .collect();
    assert!(
        programs.len() >= 12,
        "tests/corpus holds {} programs",
        programs.len()
    );
    let mut seen = BTreeSet::new();
    for e in common::corpus_expectations() {
        assert!(
            programs.contains(&e.program),
            "expected.txt:{}: no program tests/corpus/{}.cu",
            e.line,
            e.program
        );
        assert!(
            CORPUS_VARIANTS.iter().any(|(v, _)| *v == e.variant),
            "expected.txt:{}: unknown variant `{}`",
            e.line,
            e.variant
        );
        assert!(
            seen.insert((e.program.clone(), e.variant.clone())),
            "expected.txt:{}: {} {} listed twice",
            e.line,
            e.program,
            e.variant
        );
    }
    let mut missing = Vec::new();
    for program in &programs {
        for (variant, _) in CORPUS_VARIANTS {
            if !seen.contains(&(program.clone(), variant.to_string())) {
                missing.push(format!("{program} {variant}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in tests/corpus/expected.txt:\n{}",
        missing.join("\n")
    );
}

/// Every program carries at least one `#pragma dp` before a launch, so each
/// variant is a real transformation and not a pass-through.
#[test]
fn every_program_is_annotated() {
    for path in common::corpus_programs() {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with("#pragma dp ")),
            "{}: no #pragma dp",
            path.display()
        );
        assert!(
            text.contains("result example=")
                && text.contains("verified=")
                && text.contains("checksum="),
            "{}: does not print the `result ...` line that bench/gpu_check.sh verifies",
            path.display()
        );
    }
}

/// dpopt does with each program and variant what expected.txt says.
#[test]
fn outcomes_match_expected() {
    let mut mismatches = Vec::new();
    let mut nvcc_fails = Vec::new();
    let (mut applied, mut refused) = (0, 0);
    for e in common::corpus_expectations() {
        let source = common::corpus_variant(&e.program, &e.variant);
        let file = dpopt::source::SourceFile::new(format!("{}.cu", e.program), source.clone());
        let outcome = common::transform_with_headers(&file, "out.cu");
        let errors: Vec<&str> = outcome
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.kind.code())
            .collect();
        let what = format!("{} {} (expected.txt:{})", e.program, e.variant, e.line);
        match &e.outcome {
            CorpusOutcome::Ok | CorpusOutcome::OkNvccFails => {
                match &outcome.output {
                    Some(out) if errors.is_empty() => {
                        let text = String::from_utf8_lossy(out);
                        let sites = source
                            .split(|&b| b == b'\n')
                            .filter(|l| {
                                String::from_utf8_lossy(l)
                                    .trim_start()
                                    .starts_with("#pragma dp ")
                            })
                            .count();
                        // A recursive kernel's body copies hold their own
                        // rewritten launch: at least one marker per site.
                        let markers = text.matches("/* dpopt: #pragma dp ").count();
                        if outcome.sites.len() != sites || markers < sites {
                            mismatches.push(format!(
                                "{what}: {sites} pragmas, {} sites, {markers} rewritten launches",
                                outcome.sites.len()
                            ));
                        }
                        applied += 1;
                    }
                    _ => mismatches.push(format!("{what}: expected ok, refused with {errors:?}")),
                }
                if e.outcome == CorpusOutcome::OkNvccFails {
                    nvcc_fails.push(what);
                }
            }
            CorpusOutcome::Refused(code) => {
                if outcome.output.is_some() {
                    mismatches.push(format!("{what}: expected refused {code}, but transformed"));
                } else if !errors.contains(&code.as_str()) {
                    mismatches.push(format!("{what}: expected {code}, got {errors:?}"));
                }
                refused += 1;
            }
        }
    }
    if !nvcc_fails.is_empty() {
        // Known dpopt bugs (tests/corpus/PROBLEMS.md): kept visible.
        eprintln!(
            "{} corpus variants that nvcc rejects after dpopt:\n  {}",
            nvcc_fails.len(),
            nvcc_fails.join("\n  ")
        );
    }
    assert!(
        mismatches.is_empty(),
        "{} corpus outcomes differ from tests/corpus/expected.txt:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(
        applied > 0 && refused > 0,
        "applied {applied}, refused {refused}"
    );
}
