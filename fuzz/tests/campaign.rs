//! Campaign tests: the worker supervision, a smoke campaign, and the CI
//! gate (a fixed-seed campaign that must find no violation).

use dpopt_fuzz::campaign::{self, Config};
use dpopt_fuzz::pool::{Eval, Slot, WorkerSpec};
use dpopt_fuzz::protocol::Request;
use dpopt_fuzz::seeds;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn worker_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_dpopt-fuzz"))
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("dpopt-fuzz-test-{name}-{}", std::process::id()))
}

fn config(seed: u64, cases: u64, dpopt: Option<PathBuf>, fixtures: Option<PathBuf>) -> Config {
    let timeout = if cfg!(debug_assertions) { 20 } else { 5 };
    Config {
        seed,
        cases,
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        worker: WorkerSpec {
            exe: worker_exe(),
            dpopt,
            scratch: scratch("campaign"),
            timeout: Duration::from_secs(timeout),
        },
        ops: Vec::new(),
        cli_every: 50,
        nvcc: None,
        nvcc_every: 0,
        nvcc_max: 0,
        seeds: seeds::load(&seeds::default_root()),
        fixtures,
        minimize_time: Duration::from_secs(10),
        per_class: 1,
        progress: true,
    }
}

fn request(bytes: &[u8]) -> Request {
    Request {
        id: 1,
        cli: false,
        preexisting_output: false,
        keep_output: false,
        bytes: bytes.to_vec(),
    }
}

/// A fake worker executable: a shell script.
#[cfg(unix)]
fn script(name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("scripts");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[cfg(unix)]
#[test]
fn supervision_reports_crashes_and_hangs() {
    let spec = |exe: PathBuf| {
        Arc::new(WorkerSpec {
            exe,
            dpopt: None,
            scratch: scratch("supervision"),
            timeout: Duration::from_millis(300),
        })
    };
    let mut slot = Slot::new(spec(script("abort.sh", "kill -ABRT $$")));
    match slot.evaluate(&request(b"x")) {
        Eval::Crashed(d) => assert!(d.contains("signal 6"), "{d}"),
        other => panic!("expected a crash, got {other:?}"),
    }
    let mut slot = Slot::new(spec(script("hang.sh", "exec sleep 30")));
    assert!(matches!(slot.evaluate(&request(b"x")), Eval::Hung(_)));
    // The real worker answers.
    let mut slot = Slot::new(spec(worker_exe()));
    match slot.evaluate(&request(b"int x;\n")) {
        Eval::Done(r) => assert!(r.report.violations.is_empty(), "{:?}", r.report),
        other => panic!("expected a result, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(scratch("scripts"));
}

#[test]
fn smoke_campaign_runs_and_is_reproducible() {
    // The small built-in seeds only: fast in a debug build.
    let smoke = || Config {
        seeds: seeds::builtin(),
        ..config(3, 60, None, None)
    };
    let a = campaign::run(&smoke());
    assert_eq!(a.cases, 60);
    assert!(
        a.corpus > a.cases as usize / 4,
        "no feedback: corpus {}",
        a.corpus
    );
    // Same seed with one worker: the same campaign.
    let b = campaign::run(&Config { jobs: 1, ..smoke() });
    let counts = |s: &campaign::Summary| {
        s.by_class
            .iter()
            .map(|(c, s)| (*c, s.count))
            .collect::<Vec<_>>()
    };
    let _ = std::fs::remove_dir_all(scratch("campaign"));
    assert_eq!(
        counts(&a),
        counts(&b),
        "same seed, other --jobs, other results"
    );
    assert_eq!(a.corpus, b.corpus);
}

/// The CI gate: a fixed-seed campaign, the CLI sample included, must find
/// no violation. 400 cases in a debug build (about a minute on 2 cores),
/// 20,000 with `--release`; `DPOPT_FUZZ_CASES` overrides. On failure the
/// minimized examples are in target/fuzz-fixtures/.
#[test]
fn fixed_seed_campaign_has_no_violations() {
    let cases = std::env::var("DPOPT_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 400 } else { 20_000 });
    let root = seeds::default_root();
    let dpopt = campaign::find_dpopt_binary(&worker_exe(), &root, true)
        .expect("the dpopt binary for the CLI sample");
    let target = worker_exe()
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| root.join("target"), Path::to_path_buf);
    let summary = campaign::run(&config(
        1,
        cases,
        Some(dpopt),
        Some(target.join("fuzz-fixtures")),
    ));
    println!("{}", summary.render());
    let _ = std::fs::remove_dir_all(scratch("campaign"));
    assert_eq!(summary.cases, cases);
    assert_eq!(summary.violations(), 0, "{}", summary.render());
}
