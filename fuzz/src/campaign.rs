//! The campaign: generate cases from the corpus in deterministic rounds,
//! evaluate them in supervised workers, keep inputs with new behaviour (or
//! new coverage), collect violations, then minimize one example per class
//! and operator set.
//!
//! Reproducibility: rounds have a fixed size; case `id` draws its mutations
//! with `Rng::derive(seed, id)` from the corpus as it was at the start of
//! its round, and results are merged in case order, so a campaign depends
//! on `--seed` and `--cases` only, not on `--jobs` or timing (hangs aside).

use crate::minimize::{self, Budget};
use crate::mutate::Op;
use crate::nvcc::{Compiled, Nvcc};
use crate::oracle::{Class, Violation};
use crate::pool::{Eval, Pool, Slot, WorkerSpec};
use crate::protocol::Request;
use crate::rng::{fnv1a, mix, Rng};
use crate::seeds::Seed;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Campaign settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    pub cases: u64,
    pub jobs: usize,
    /// The worker processes.
    pub worker: WorkerSpec,
    /// Use only these operators (all when empty).
    pub ops: Vec<Op>,
    /// Run the CLI on one case in this many (0: never).
    pub cli_every: u64,
    pub nvcc: Option<Nvcc>,
    /// Ask one case in this many for its output, for nvcc.
    pub nvcc_every: u64,
    /// At most this many nvcc comparisons.
    pub nvcc_max: usize,
    pub seeds: Vec<Seed>,
    /// Write minimized examples here.
    pub fixtures: Option<PathBuf>,
    /// Time for minimizing one example.
    pub minimize_time: Duration,
    /// Examples kept (and minimized) per class.
    pub per_class: usize,
    /// Print progress to standard error.
    pub progress: bool,
}

/// One violating case.
#[derive(Debug, Clone)]
pub struct Finding {
    pub id: u64,
    pub violation: Violation,
    pub bytes: Vec<u8>,
    pub ops: Vec<Op>,
    /// The seed the case descends from.
    pub origin: String,
    pub cli: bool,
}

impl Finding {
    pub fn ops_text(&self) -> String {
        if self.ops.is_empty() {
            "(seed)".to_string()
        } else {
            self.ops
                .iter()
                .map(|o| o.name())
                .collect::<Vec<_>>()
                .join("+")
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ClassStats {
    pub count: u64,
    pub examples: Vec<Finding>,
}

#[derive(Debug, Clone, Default)]
pub struct OpStats {
    pub cases: u64,
    pub violations: BTreeMap<Class, u64>,
}

/// A written fixture.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub path: PathBuf,
    pub description: String,
}

/// What a campaign found.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub seed: u64,
    pub jobs: usize,
    pub cases: u64,
    pub elapsed: Duration,
    /// Time spent checking cases inside the workers.
    pub check_time: Duration,
    pub by_class: BTreeMap<Class, ClassStats>,
    pub by_op: BTreeMap<&'static str, OpStats>,
    pub corpus: usize,
    pub signatures: usize,
    pub coverage_features: usize,
    pub unconfirmed: Vec<String>,
    pub cli_checks: u64,
    pub nvcc_checks: u64,
    pub nvcc_originals_rejected: u64,
    pub fixtures: Vec<Fixture>,
    pub notes: Vec<String>,
}

impl Summary {
    pub fn violations(&self) -> u64 {
        self.by_class.values().map(|c| c.count).sum()
    }

    /// The human-readable report.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let secs = self.elapsed.as_secs_f64();
        let _ = writeln!(s, "== dpopt-fuzz: seed {}, {} jobs", self.seed, self.jobs);
        let _ = writeln!(
            s,
            "cases: {} in {:.1} s ({:.0} cases/s, {:.2} ms/case wall, {:.2} ms/case in workers)",
            self.cases,
            secs,
            self.cases as f64 / secs.max(1e-9),
            secs * 1000.0 / self.cases.max(1) as f64,
            self.check_time.as_secs_f64() * 1000.0 / self.cases.max(1) as f64
        );
        let _ = writeln!(
            s,
            "corpus: {} inputs, {} behaviour signatures, {} coverage features{}",
            self.corpus,
            self.signatures,
            self.coverage_features,
            if self.coverage_features == 0 {
                " (not instrumented: behavioural feedback only)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            s,
            "CLI samples: {}; nvcc comparisons: {} (originals nvcc rejects, skipped: {})",
            self.cli_checks, self.nvcc_checks, self.nvcc_originals_rejected
        );
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        if !self.unconfirmed.is_empty() {
            let _ = writeln!(
                s,
                "unconfirmed crashes/timeouts (not counted): {}",
                self.unconfirmed.len()
            );
            for u in self.unconfirmed.iter().take(3) {
                let _ = writeln!(s, "  {u}");
            }
        }
        let _ = writeln!(s, "violations: {}", self.violations());
        for (class, stats) in &self.by_class {
            let _ = writeln!(
                s,
                "  {:<22} {:>7}  {}",
                class.name(),
                stats.count,
                class.what()
            );
            for e in stats.examples.iter().take(3) {
                let _ = writeln!(
                    s,
                    "      e.g. case {} [{} on {}]: {}",
                    e.id,
                    e.ops_text(),
                    e.origin,
                    e.violation.detail
                );
            }
        }
        let _ = writeln!(s, "per operator (cases, violations by class):");
        for (op, stats) in &self.by_op {
            let v: Vec<String> = stats
                .violations
                .iter()
                .map(|(c, n)| format!("{}={n}", c.name()))
                .collect();
            let _ = writeln!(s, "  {:<28} {:>8}  {}", op, stats.cases, v.join(" "));
        }
        if !self.fixtures.is_empty() {
            let _ = writeln!(s, "minimized examples:");
            for f in &self.fixtures {
                let _ = writeln!(s, "  {}: {}", f.path.display(), f.description);
            }
        }
        s
    }
}

/// A corpus entry.
struct Entry {
    bytes: Vec<u8>,
    origin: String,
}

/// A generated case.
struct Case {
    request: Request,
    ops: Vec<Op>,
    origin: String,
}

/// Inputs larger than this are checked but not kept in the corpus.
const MAX_CORPUS_INPUT: usize = 300_000;
const MAX_CORPUS: usize = 4096;

/// Run a campaign.
pub fn run(config: &Config) -> Summary {
    let start = Instant::now();
    let mut summary = Summary {
        seed: config.seed,
        jobs: config.jobs,
        ..Summary::default()
    };
    if config.worker.dpopt.is_none() && config.cli_every > 0 {
        summary
            .notes
            .push("no dpopt binary: the CLI sample is disabled".to_string());
    }
    let mut corpus: Vec<Entry> = config
        .seeds
        .iter()
        .map(|s| Entry {
            bytes: s.bytes.clone(),
            origin: s.name.clone(),
        })
        .collect();
    let seed_count = corpus.len();
    let mut signatures: HashSet<u64> = HashSet::new();
    let mut features: HashSet<u32> = HashSet::new();
    let mut pool = Pool::new(config.worker.clone(), config.jobs);
    // Fixed, not derived from `jobs`: the corpus at each round's start must
    // not depend on the number of workers.
    const ROUND_SIZE: u64 = 256;

    let (nvcc_tx, nvcc_results, nvcc_thread) = start_nvcc(config);
    let mut nvcc_sent = 0usize;

    let mut next_id = 0u64;
    let mut round = 0u64;
    let mut last_progress = Instant::now();
    while next_id < config.cases {
        let n = ROUND_SIZE.min(config.cases - next_id);
        // Corpus replacement has its own stream, apart from the cases'.
        let mut rng = Rng::derive(mix(config.seed, 0x5eed), round);
        let cases = make_cases(config, next_id..next_id + n, &corpus);
        let requests: Vec<Request> = cases.iter().map(|c| c.request.clone()).collect();
        let evals = pool.run(&requests);
        for (case, eval) in cases.into_iter().zip(evals) {
            summary.cases += 1;
            if case.request.cli && config.worker.dpopt.is_some() {
                summary.cli_checks += 1;
            }
            let names: BTreeSet<&'static str> = if case.ops.is_empty() {
                BTreeSet::from(["(seed)"])
            } else {
                case.ops.iter().map(|o| o.name()).collect()
            };
            for name in &names {
                summary.by_op.entry(name).or_default().cases += 1;
            }
            let violations = eval.violations();
            for v in &violations {
                for name in &names {
                    *summary
                        .by_op
                        .entry(name)
                        .or_default()
                        .violations
                        .entry(v.class)
                        .or_default() += 1;
                }
            }
            let mut new_behaviour = false;
            match &eval {
                Eval::Done(resp) => {
                    summary.check_time += Duration::from_micros(resp.micros);
                    new_behaviour |= signatures.insert(resp.report.signature);
                    for &f in &resp.report.features {
                        new_behaviour |= features.insert(f);
                    }
                    if let (Some(out), Some(tx)) = (&resp.report.output, &nvcc_tx) {
                        if nvcc_sent < config.nvcc_max {
                            nvcc_sent += 1;
                            let _ = tx.send(NvccJob {
                                input: case.request.bytes.clone(),
                                output: out.clone(),
                                ops: case.ops.clone(),
                                origin: case.origin.clone(),
                                id: case.request.id,
                            });
                        }
                    }
                }
                Eval::Unconfirmed(d) => summary.unconfirmed.push(d.clone()),
                Eval::Crashed(_) | Eval::Hung(_) => new_behaviour = true,
            }
            for v in violations {
                record(&mut summary, config.per_class, &case, v);
            }
            if new_behaviour && case.request.bytes.len() <= MAX_CORPUS_INPUT {
                let entry = Entry {
                    bytes: case.request.bytes,
                    origin: case.origin,
                };
                if corpus.len() < MAX_CORPUS {
                    corpus.push(entry);
                } else {
                    let victim = seed_count + rng.below(corpus.len() - seed_count);
                    corpus[victim] = entry;
                }
            }
        }
        next_id += n;
        round += 1;
        if config.progress && last_progress.elapsed() > Duration::from_secs(5) {
            last_progress = Instant::now();
            let classes: Vec<String> = summary
                .by_class
                .iter()
                .map(|(c, s)| format!("{}={}", c.name(), s.count))
                .collect();
            eprintln!(
                "[{:>6.1}s] {} cases ({:.0}/s), corpus {}, violations: {}",
                start.elapsed().as_secs_f64(),
                summary.cases,
                summary.cases as f64 / start.elapsed().as_secs_f64(),
                corpus.len(),
                if classes.is_empty() {
                    "none".to_string()
                } else {
                    classes.join(" ")
                }
            );
        }
    }
    summary.elapsed = start.elapsed();
    summary.corpus = corpus.len();
    summary.signatures = signatures.len();
    summary.coverage_features = features.len();

    drop(nvcc_tx);
    if let Some(t) = nvcc_thread {
        if config.progress && nvcc_sent > 0 {
            eprintln!("waiting for {nvcc_sent} nvcc comparison(s)...");
        }
        let _ = t.join();
    }
    if let Some(results) = nvcc_results {
        let results = results.lock().map(|r| r.clone()).unwrap_or_default();
        for r in results {
            summary.nvcc_checks += 1;
            match r {
                NvccOutcome::OriginalRejected => summary.nvcc_originals_rejected += 1,
                NvccOutcome::Fine => {}
                NvccOutcome::OutputRejected(finding) => {
                    let names: BTreeSet<&str> = finding.ops.iter().map(|o| o.name()).collect();
                    for name in names {
                        *summary
                            .by_op
                            .entry(name)
                            .or_default()
                            .violations
                            .entry(Class::NvccRejects)
                            .or_default() += 1;
                    }
                    let case = Case {
                        request: Request {
                            id: finding.id,
                            cli: false,
                            preexisting_output: false,
                            keep_output: false,
                            bytes: finding.bytes.clone(),
                        },
                        ops: finding.ops.clone(),
                        origin: finding.origin.clone(),
                    };
                    record(&mut summary, config.per_class, &case, finding.violation);
                }
            }
        }
    }

    if let Some(dir) = &config.fixtures {
        summary.fixtures = write_fixtures(config, &summary, &mut pool, dir);
    }
    summary
}

/// The cases `ids`, generated in parallel: case `id` draws from its own
/// `Rng::derive(seed, id)`, so the result does not depend on the threads.
fn make_cases(config: &Config, ids: std::ops::Range<u64>, corpus: &[Entry]) -> Vec<Case> {
    let ids: Vec<u64> = ids.collect();
    let chunk = ids.len().div_ceil(config.jobs.max(1)).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = ids
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|&id| make_case(config, id, corpus, &mut Rng::derive(config.seed, id)))
                        .collect::<Vec<Case>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("case generation"))
            .collect()
    })
}

/// Case `id`: a seed as is (the first ids), a seed with at most one benign
/// mutation (the nvcc sample: its original must compile), or a mutant of a
/// corpus entry.
fn make_case(config: &Config, id: u64, corpus: &[Entry], rng: &mut Rng) -> Case {
    let h = mix(config.seed, id);
    // The built-in seeds are written to compile: nvcc checks each of them.
    let builtin_seed = config
        .seeds
        .get(id as usize)
        .is_some_and(|s| s.name.starts_with("builtin:"));
    let keep_output = config.nvcc.is_some()
        && config.nvcc_every > 0
        && (builtin_seed || mix(h, 1) % config.nvcc_every == 0);
    let (bytes, ops, origin) = if (id as usize) < config.seeds.len() {
        let s = &config.seeds[id as usize];
        (s.bytes.clone(), Vec::new(), s.name.clone())
    } else if keep_output {
        let s = rng.pick(&config.seeds);
        let op = *rng.pick(Op::BENIGN);
        match op.apply(&s.bytes, b"", rng) {
            Some(out) if rng.chance(3, 4) => (out, vec![op], s.name.clone()),
            _ => (s.bytes.clone(), Vec::new(), s.name.clone()),
        }
    } else {
        // Tournament of two: smaller inputs are faster to check and give
        // smaller examples.
        let (a, b) = (rng.below(corpus.len()), rng.below(corpus.len()));
        let parent = if corpus[a].bytes.len() <= corpus[b].bytes.len() {
            &corpus[a]
        } else {
            &corpus[b]
        };
        let count = if rng.chance(3, 5) { 1 } else { rng.range(2, 4) };
        let mut bytes = parent.bytes.clone();
        let mut ops = Vec::new();
        for _ in 0..count {
            for _attempt in 0..8 {
                let op = Op::random(rng, &config.ops);
                let donor = &corpus[rng.below(corpus.len())].bytes;
                if let Some(out) = op.apply(&bytes, donor, rng) {
                    bytes = out;
                    ops.push(op);
                    break;
                }
            }
        }
        if ops.is_empty() {
            if let Some(out) = Op::ByteInsert.apply(&bytes, b"", rng) {
                bytes = out;
                ops.push(Op::ByteInsert);
            }
        }
        (bytes, ops, parent.origin.clone())
    };
    let cli = config.cli_every > 0 && h % config.cli_every == 0;
    Case {
        request: Request {
            id,
            cli,
            preexisting_output: cli && (h / config.cli_every.max(1)) % 2 == 1,
            keep_output,
            bytes,
        },
        ops,
        origin,
    }
}

/// Count a violation and keep it as an example when it brings a new
/// operator set (or is smaller than the example with the same set).
fn record(summary: &mut Summary, per_class: usize, case: &Case, v: Violation) {
    let stats = summary.by_class.entry(v.class).or_default();
    stats.count += 1;
    let finding = Finding {
        id: case.request.id,
        violation: v,
        bytes: case.request.bytes.clone(),
        ops: case.ops.clone(),
        origin: case.origin.clone(),
        cli: case.request.cli,
    };
    let mut key = finding.ops.clone();
    key.sort();
    key.dedup();
    let same = stats.examples.iter().position(|e| {
        let mut k = e.ops.clone();
        k.sort();
        k.dedup();
        k == key
    });
    match same {
        Some(i) if finding.bytes.len() < stats.examples[i].bytes.len() => {
            stats.examples[i] = finding
        }
        Some(_) => {}
        None if stats.examples.len() < per_class.max(1) => stats.examples.push(finding),
        None => {
            // Prefer examples reached with fewer operators.
            if let Some((i, worst)) = stats
                .examples
                .iter()
                .enumerate()
                .max_by_key(|(_, e)| (e.ops.len(), e.bytes.len()))
            {
                if (finding.ops.len(), finding.bytes.len()) < (worst.ops.len(), worst.bytes.len()) {
                    stats.examples[i] = finding;
                }
            }
        }
    }
}

struct NvccJob {
    input: Vec<u8>,
    output: Vec<u8>,
    ops: Vec<Op>,
    origin: String,
    id: u64,
}

#[derive(Debug, Clone)]
enum NvccOutcome {
    Fine,
    OriginalRejected,
    OutputRejected(Finding),
}

type NvccChannel = (
    Option<mpsc::Sender<NvccJob>>,
    Option<Arc<Mutex<Vec<NvccOutcome>>>>,
    Option<std::thread::JoinHandle<()>>,
);

/// The nvcc comparisons run on their own thread, beside the campaign.
fn start_nvcc(config: &Config) -> NvccChannel {
    let Some(nvcc) = config.nvcc.clone() else {
        return (None, None, None);
    };
    let (tx, rx) = mpsc::channel::<NvccJob>();
    let results = Arc::new(Mutex::new(Vec::new()));
    let out = Arc::clone(&results);
    let handle = std::thread::spawn(move || {
        let mut originals: HashMap<u64, bool> = HashMap::new();
        for job in rx {
            let key = fnv1a(&job.input);
            let original_ok = *originals
                .entry(key)
                .or_insert_with(|| nvcc.compile("in.cu", &job.input) == Compiled::Ok);
            let outcome = if !original_ok {
                NvccOutcome::OriginalRejected
            } else {
                match nvcc.compile("out.cu", &job.output) {
                    Compiled::Rejected(errors) => NvccOutcome::OutputRejected(Finding {
                        id: job.id,
                        violation: Violation::new(Class::NvccRejects, errors),
                        bytes: job.input,
                        ops: job.ops,
                        origin: job.origin,
                        cli: false,
                    }),
                    _ => NvccOutcome::Fine,
                }
            };
            if let Ok(mut r) = out.lock() {
                r.push(outcome);
            }
        }
    });
    (Some(tx), Some(results), Some(handle))
}

/// A minimized example: its bytes and the violation's detail on them.
type Minimized = (Vec<u8>, String);

/// Minimize the examples and write `CLASS-N.cu` + `CLASS-N.txt` to `dir`.
fn write_fixtures(config: &Config, summary: &Summary, pool: &mut Pool, dir: &Path) -> Vec<Fixture> {
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("cannot create {}: {e}", dir.display());
        return Vec::new();
    }
    // Remove the fixtures of an earlier run.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let stale = Class::ALL
                .iter()
                .any(|c| name.starts_with(&format!("{}-", c.name())));
            if stale && (name.ends_with(".cu") || name.ends_with(".txt")) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    let jobs: Vec<&Finding> = summary
        .by_class
        .values()
        .flat_map(|s| s.examples.iter())
        .collect();
    if config.progress && !jobs.is_empty() {
        eprintln!("minimizing {} example(s)...", jobs.len());
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Minimized>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for slot in pool.slots.iter_mut() {
            let (next, results, jobs) = (&next, &results, &jobs);
            s.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= jobs.len() {
                    break;
                }
                let r = minimize_finding(config, slot, jobs[i]);
                if let Ok(mut m) = results[i].lock() {
                    *m = Some(r);
                }
            });
        }
    });
    let mut written = Vec::new();
    let mut seen: HashSet<(Class, Vec<u8>)> = HashSet::new();
    let mut counters: BTreeMap<Class, usize> = BTreeMap::new();
    for (finding, result) in jobs.iter().zip(results) {
        let Some((bytes, detail)) = result.into_inner().ok().flatten() else {
            continue;
        };
        let class = finding.violation.class;
        if !seen.insert((class, bytes.clone())) {
            continue;
        }
        let n = counters.entry(class).or_default();
        *n += 1;
        let base = format!("{}-{n}", class.name());
        let path = dir.join(format!("{base}.cu"));
        let description = format!(
            "{}: {} [case {}, {} on {}, {} -> {} bytes]",
            class.name(),
            detail,
            finding.id,
            finding.ops_text(),
            finding.origin,
            finding.bytes.len(),
            bytes.len()
        );
        let ok = std::fs::write(&path, &bytes).is_ok()
            && std::fs::write(dir.join(format!("{base}.txt")), format!("{description}\n")).is_ok();
        if ok {
            written.push(Fixture { path, description });
        }
    }
    written
}

/// Shrink one example while it still shows its class; returns the bytes
/// and the violation's detail on them.
fn minimize_finding(config: &Config, slot: &mut Slot, finding: &Finding) -> (Vec<u8>, String) {
    let class = finding.violation.class;
    let cli = finding.cli
        || matches!(
            class,
            Class::CliExitCode | Class::CliStrayOutput | Class::CliMismatch
        );
    let request = |bytes: &[u8]| Request {
        id: 0,
        cli,
        preexisting_output: false,
        keep_output: false,
        bytes: bytes.to_vec(),
    };
    if class == Class::NvccRejects {
        // Each test would take two nvcc runs: keep the case as found.
        return (finding.bytes.clone(), finding.violation.detail.clone());
    }
    let max_tests = if class == Class::Hang { 20 } else { 20_000 };
    let budget = Budget {
        deadline: Instant::now() + config.minimize_time,
        max_tests,
    };
    let bytes = minimize::minimize(&finding.bytes, budget, |candidate| {
        slot.evaluate(&request(candidate))
            .classes()
            .contains(&class)
    });
    let detail = slot
        .evaluate(&request(&bytes))
        .violations()
        .into_iter()
        .find(|v| v.class == class)
        .map_or_else(|| finding.violation.detail.clone(), |v| v.detail);
    (bytes, detail)
}

/// Build (when run through cargo) and find the `dpopt` binary next to the
/// `dpopt-fuzz` executable, in the same profile directory.
pub fn find_dpopt_binary(worker_exe: &Path, root: &Path, build: bool) -> Result<PathBuf, String> {
    let profile_dir = worker_exe
        .parent()
        .ok_or_else(|| "the fuzzer's executable has no directory".to_string())?;
    let exe = profile_dir.join(format!("dpopt{}", std::env::consts::EXE_SUFFIX));
    if build {
        if let (Some(cargo), Some(target)) = (std::env::var_os("CARGO"), profile_dir.parent()) {
            let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") => "dev".to_string(),
                Some(p) => p.to_string(),
                None => "dev".to_string(),
            };
            let status = std::process::Command::new(cargo)
                .args([
                    "build",
                    "--quiet",
                    "-p",
                    "dpopt",
                    "--bin",
                    "dpopt",
                    "--profile",
                ])
                .arg(&profile)
                .arg("--manifest-path")
                .arg(root.join("Cargo.toml"))
                .env("CARGO_TARGET_DIR", target)
                .env_remove("RUSTC_WORKSPACE_WRAPPER")
                .status();
            match status {
                Ok(s) if s.success() => {}
                Ok(s) => return Err(format!("`cargo build -p dpopt --bin dpopt` failed ({s})")),
                Err(e) => return Err(format!("cannot run cargo: {e}")),
            }
        }
    }
    if exe.exists() {
        Ok(exe)
    } else {
        Err(format!("{} does not exist", exe.display()))
    }
}
