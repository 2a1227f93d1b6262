//! The `dpopt` command line.

use clap::{Parser, Subcommand};
use dpopt::source::SourceFile;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Optimize CUDA dynamic-parallelism launches annotated with `#pragma dp`.
#[derive(Parser)]
#[command(name = "dpopt", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Transform INPUT (a path, or - for stdin) and write the result.
    Transform {
        /// The annotated .cu file, or - for standard input.
        input: String,
        /// Output file (written atomically); standard output if omitted.
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        search: Search,
        /// Migrate every device-side `cudaDeviceSynchronize()` after launches
        /// (CDP1, not available on sm_90) to a continuation kernel launched
        /// into `cudaStreamTailLaunch`, with or without `#pragma dp`.
        #[arg(long)]
        migrate_sync: bool,
    },
    /// Parse and validate INPUT; print diagnostics and the tuning macros of
    /// every launch site.
    Check {
        /// The annotated .cu file, or - for standard input.
        input: String,
        #[command(flatten)]
        search: Search,
        /// Check as `transform --migrate-sync` would transform.
        #[arg(long)]
        migrate_sync: bool,
    },
}

/// Where child kernels defined outside INPUT are looked for.
#[derive(clap::Args)]
struct Search {
    /// Search DIR for headers included with `#include "..."` (after the
    /// including file's directory), as nvcc -I does; repeatable.
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    include_dirs: Vec<PathBuf>,
    /// Another source file (a separate translation unit) that defines
    /// kernels INPUT launches; repeatable.
    #[arg(long = "child-source", value_name = "FILE.cu")]
    child_sources: Vec<PathBuf>,
}

impl Search {
    fn options(&self, input: &str) -> Result<dpopt::unit::Options, String> {
        for path in &self.child_sources {
            if !path.is_file() {
                return Err(format!(
                    "cannot read `--child-source {}`: no such file",
                    path.display()
                ));
            }
        }
        Ok(dpopt::unit::Options {
            include_dirs: self.include_dirs.clone(),
            child_sources: self.child_sources.clone(),
            input_dir: (input != "-")
                .then(|| Path::new(input).parent().map(Path::to_path_buf))
                .flatten(),
        })
    }
}

/// Stack for the pipeline: every recursion in dpopt is bounded, and this
/// leaves a wide margin for the deepest input it still reads.
const STACK_BYTES: usize = 256 << 20;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let work = move || match cli.command {
        Command::Transform {
            input,
            output,
            search,
            migrate_sync,
        } => transform(&input, output.as_deref(), &search, migrate_sync),
        Command::Check {
            input,
            search,
            migrate_sync,
        } => check(&input, &search, migrate_sync),
    };
    match std::thread::Builder::new()
        .name("dpopt".into())
        .stack_size(STACK_BYTES)
        .spawn(work)
    {
        Ok(thread) => thread.join().unwrap_or(ExitCode::from(101)),
        Err(e) => fail(&format!("cannot start: {e}"), 1),
    }
}

fn read_input(input: &str) -> Result<SourceFile, String> {
    if input == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(SourceFile::new("<stdin>", bytes))
    } else {
        let bytes = std::fs::read(input).map_err(|e| format!("cannot read `{input}`: {e}"))?;
        Ok(SourceFile::new(input, bytes))
    }
}

fn report(file: &SourceFile, outcome: &dpopt::Outcome) {
    let source = outcome.source(file);
    for d in &outcome.diagnostics {
        eprintln!("{:?}", d.to_report(source));
    }
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("dpopt: error: {message}");
    ExitCode::from(code)
}

fn transform(input: &str, output: Option<&Path>, search: &Search, migrate: bool) -> ExitCode {
    if let Some(out) = output {
        if input != "-" && same_file(Path::new(input), out) {
            return fail(
                &format!(
                    "`-o {}` names the input file; write the output to another file",
                    out.display()
                ),
                2,
            );
        }
    }
    let file = match read_input(input) {
        Ok(f) => f,
        Err(e) => return fail(&e, 1),
    };
    let options = match search.options(input) {
        Ok(o) => o,
        Err(e) => return fail(&e, 1),
    };
    let output_name = output.map_or("<stdout>".to_string(), |p| p.display().to_string());
    let outcome = dpopt::run_migrating(&file, Some(&options), migrate, &output_name, true);
    report(&file, &outcome);
    let Some(bytes) = outcome.output else {
        return ExitCode::from(1);
    };
    let written = match output {
        Some(path) => write_atomically(path, &bytes),
        None => std::io::stdout()
            .lock()
            .write_all(&bytes)
            .map_err(|e| format!("cannot write standard output: {e}")),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e, 1),
    }
}

fn check(input: &str, search: &Search, migrate: bool) -> ExitCode {
    let file = match read_input(input) {
        Ok(f) => f,
        Err(e) => return fail(&e, 1),
    };
    let options = match search.options(input) {
        Ok(o) => o,
        Err(e) => return fail(&e, 1),
    };
    let outcome = dpopt::run_migrating(&file, Some(&options), migrate, "<check>", false);
    report(&file, &outcome);
    for site in &outcome.sites {
        let macros: Vec<String> = site
            .macros
            .iter()
            .map(|(m, v)| format!("{m}={v}"))
            .collect();
        println!(
            "{}: site {} (child `{}`): {}",
            site.location,
            site.id,
            site.child,
            macros.join(" ")
        );
        if let Some(a) = &site.aggregation {
            println!("    {a}");
        }
    }
    for (location, what) in &outcome.postwork_sites {
        println!("{location}: {what}");
    }
    if outcome.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Write to a temporary file beside `path`, then rename it into place, so
/// that a failed run never leaves a half-written output.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)
        .map_err(|e| format!("cannot create a file in `{}`: {e}", dir.display()))?;
    tmp.write_all(bytes)
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| format!("cannot write `{}`: {}", path.display(), e.error))?;
    Ok(())
}
