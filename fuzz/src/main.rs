//! The `dpopt-fuzz` command: run a campaign (default), check files, or serve
//! as a worker process of a campaign.

use clap::{Args, Parser, Subcommand};
use dpopt_fuzz::campaign::{self, Config};
use dpopt_fuzz::mutate::Op;
use dpopt_fuzz::nvcc::{Compiled, Nvcc};
use dpopt_fuzz::oracle::{Class, Violation};
use dpopt_fuzz::pool::{Eval, Slot, WorkerSpec};
use dpopt_fuzz::protocol::Request;
use dpopt_fuzz::worker::{self, WorkerOptions};
use dpopt_fuzz::{coverage, oracle, seeds};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// SanitizerCoverage registers the edge counters of instrumented code here
/// (see src/coverage.rs); without instrumentation it is never called.
///
/// # Safety
/// Called by the instrumentation's module constructors with a valid range.
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_cov_8bit_counters_init(start: *mut u8, end: *mut u8) {
    // SAFETY: forwarded from SanitizerCoverage, which passes a counter array
    // that lives as long as the process.
    unsafe { coverage::register(start, end) }
}

/// Contract fuzzer for dpopt: mutates CUDA sources and checks that dpopt
/// either writes a correct output or reports a pointed error, never panics,
/// aborts, hangs or skips a `#pragma dp`.
#[derive(Parser)]
#[command(name = "dpopt-fuzz", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    campaign: CampaignArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Check files with the oracle (CLI sample included) and print the
    /// violations; exit 1 if there is any.
    Check {
        files: Vec<PathBuf>,
        /// The dpopt binary for the CLI checks (default: built/found next
        /// to this executable).
        #[arg(long)]
        dpopt: Option<PathBuf>,
        /// Per-case time limit in seconds.
        #[arg(long, default_value_t = 5.0)]
        timeout: f64,
        /// Also compile each file and its output with this nvcc.
        #[arg(long)]
        nvcc: Option<PathBuf>,
    },
    /// Internal: serve cases on standard input/output.
    #[command(hide = true)]
    Worker {
        #[arg(long)]
        dpopt: Option<PathBuf>,
        #[arg(long)]
        scratch: PathBuf,
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
    },
}

#[derive(Args)]
struct CampaignArgs {
    /// Seed of the campaign: the same seed and case count give the same cases.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of cases.
    #[arg(long, default_value_t = 10_000)]
    cases: u64,
    /// Worker processes (default: the available parallelism).
    #[arg(long)]
    jobs: Option<usize>,
    /// Per-case time limit in seconds (a case past it is a hang).
    #[arg(long, default_value_t = 5.0)]
    timeout: f64,
    /// Minimize one example per class and operator set and write them here
    /// as CLASS-N.cu with a one-line CLASS-N.txt.
    #[arg(long, value_name = "DIR")]
    write_fixtures: Option<PathBuf>,
    /// Seconds to spend minimizing one example.
    #[arg(long, default_value_t = 60.0)]
    minimize_secs: f64,
    /// Examples kept (and minimized) per violation class.
    #[arg(long, default_value_t = 3)]
    per_class: usize,
    /// Use only these mutation operators (comma-separated names, as in
    /// the report).
    #[arg(long, value_delimiter = ',')]
    ops: Vec<String>,
    /// Run the dpopt CLI on one case in N (0: never).
    #[arg(long, default_value_t = 50)]
    cli_every: u64,
    /// The dpopt binary for the CLI sample (default: built with cargo when
    /// run through cargo, else found next to this executable).
    #[arg(long)]
    dpopt: Option<PathBuf>,
    /// nvcc for the compile sample (default: DPOPT_NVCC, .venv-nvcc, PATH).
    #[arg(long)]
    nvcc: Option<PathBuf>,
    /// Do not compile outputs with nvcc.
    #[arg(long)]
    no_nvcc: bool,
    /// Compile the output of one case in N with nvcc (when it has sites).
    #[arg(long, default_value_t = 500)]
    nvcc_every: u64,
    /// At most this many nvcc comparisons per campaign.
    #[arg(long, default_value_t = 40)]
    nvcc_max: usize,
    /// The repository root (seed files, `-I examples`).
    #[arg(long)]
    root: Option<PathBuf>,
    /// No progress lines.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Worker {
            dpopt,
            scratch,
            timeout_ms,
        }) => {
            let options = WorkerOptions {
                dpopt,
                scratch,
                timeout: Duration::from_millis(timeout_ms),
            };
            match worker::serve(&options) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("dpopt-fuzz worker: {e}");
                    ExitCode::from(3)
                }
            }
        }
        Some(Command::Check {
            files,
            dpopt,
            timeout,
            nvcc,
        }) => check_files(&files, dpopt, timeout, nvcc),
        None => run_campaign(cli.campaign),
    }
}

fn self_exe() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("dpopt-fuzz"))
}

/// The dpopt binary: as given, or built/found next to this executable.
fn dpopt_binary(
    explicit: Option<PathBuf>,
    root: &std::path::Path,
) -> (Option<PathBuf>, Option<String>) {
    if let Some(p) = explicit {
        // The CLI runs in a scratch directory: make the path absolute.
        return (Some(std::fs::canonicalize(&p).unwrap_or(p)), None);
    }
    // An instrumented build cannot link the CLI with the same flags; use
    // the plain one next to it.
    match campaign::find_dpopt_binary(&self_exe(), root, !coverage::enabled()) {
        Ok(p) => (Some(p), None),
        Err(e) => (None, Some(format!("CLI checks disabled: {e}"))),
    }
}

fn run_campaign(args: CampaignArgs) -> ExitCode {
    let root = args.root.unwrap_or_else(seeds::default_root);
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let scratch = oracle::default_scratch();
    let (dpopt, note) = if args.cli_every > 0 {
        dpopt_binary(args.dpopt, &root)
    } else {
        (None, None)
    };
    let nvcc = if args.no_nvcc {
        None
    } else {
        args.nvcc.or_else(|| Nvcc::find(&root)).map(|exe| Nvcc {
            exe,
            include: root.join("examples"),
            scratch: scratch.clone(),
            timeout: Duration::from_secs(300),
        })
    };
    let mut ops = Vec::new();
    for name in &args.ops {
        match Op::from_name(name) {
            Some(op) => ops.push(op),
            None => {
                let known: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
                eprintln!("unknown operator `{name}`; known: {}", known.join(", "));
                return ExitCode::from(2);
            }
        }
    }
    let seeds = seeds::load(&root);
    let config = Config {
        seed: args.seed,
        cases: args.cases,
        jobs,
        worker: WorkerSpec {
            exe: self_exe(),
            dpopt,
            scratch: scratch.clone(),
            timeout: Duration::from_secs_f64(args.timeout),
        },
        ops,
        cli_every: args.cli_every,
        nvcc,
        nvcc_every: args.nvcc_every,
        nvcc_max: args.nvcc_max,
        seeds,
        fixtures: args.write_fixtures,
        minimize_time: Duration::from_secs_f64(args.minimize_secs),
        per_class: args.per_class,
        progress: !args.quiet,
    };
    if !args.quiet {
        eprintln!(
            "dpopt-fuzz: seed {}, {} cases, {} jobs, {} seeds, CLI: {}, nvcc: {}, coverage: {}",
            config.seed,
            config.cases,
            config.jobs,
            config.seeds.len(),
            config
                .worker
                .dpopt
                .as_ref()
                .map_or("off".to_string(), |p| p.display().to_string()),
            config
                .nvcc
                .as_ref()
                .map_or("off".to_string(), |n| n.exe.display().to_string()),
            if coverage::enabled() {
                "sancov"
            } else {
                "behavioural"
            }
        );
    }
    let mut summary = campaign::run(&config);
    summary.notes.extend(note);
    oracle::remove_scratch(&scratch);
    print!("{}", summary.render());
    if summary.violations() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn check_files(
    files: &[PathBuf],
    dpopt: Option<PathBuf>,
    timeout: f64,
    nvcc: Option<PathBuf>,
) -> ExitCode {
    let scratch = oracle::default_scratch();
    let root = seeds::default_root();
    let nvcc = nvcc.map(|exe| Nvcc {
        exe,
        include: root.join("examples"),
        scratch: scratch.clone(),
        timeout: Duration::from_secs(300),
    });
    let (dpopt, note) = dpopt_binary(dpopt, &root);
    if let Some(n) = note {
        eprintln!("note: {n}");
    }
    let spec = WorkerSpec {
        exe: self_exe(),
        dpopt,
        scratch: scratch.clone(),
        timeout: Duration::from_secs_f64(timeout),
    };
    let mut slot = Slot::new(Arc::new(spec));
    let mut any = false;
    for (i, path) in files.iter().enumerate() {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                any = true;
                continue;
            }
        };
        let eval = slot.evaluate(&Request {
            id: i as u64,
            cli: true,
            preexisting_output: i % 2 == 1,
            keep_output: nvcc.is_some(),
            bytes: bytes.clone(),
        });
        let mut violations = eval.violations();
        if let (Some(nvcc), Eval::Done(resp)) = (&nvcc, &eval) {
            if let Some(out) = &resp.report.output {
                match (nvcc.compile("in.cu", &bytes), nvcc.compile("out.cu", out)) {
                    (Compiled::Ok, Compiled::Rejected(errors)) => {
                        violations.push(Violation::new(Class::NvccRejects, errors))
                    }
                    (Compiled::Rejected(_), _) => println!(
                        "{}: nvcc rejects the file itself: no comparison",
                        path.display()
                    ),
                    _ => {}
                }
            }
        }
        if let Eval::Unconfirmed(d) = &eval {
            println!("{}: (unconfirmed) {d}", path.display());
        }
        if violations.is_empty() {
            println!("{}: ok", path.display());
        }
        for v in violations {
            any = true;
            println!("{}: {}: {}", path.display(), v.class.name(), v.detail);
        }
    }
    oracle::remove_scratch(&scratch);
    if any {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
