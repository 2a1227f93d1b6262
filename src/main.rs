//! The `dpopt` command line.

use clap::{CommandFactory, Parser, Subcommand};
use dpopt::message_format::MessageFormat;
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
    /// Transform each INPUT (a path, or - for stdin) and write the result.
    Transform {
        /// The annotated .cu files, or - for standard input.
        #[arg(required = true, value_name = "INPUT")]
        inputs: Vec<String>,
        /// Output file (written atomically), - for standard output; give
        /// one per INPUT, in order. Standard output when omitted (one INPUT).
        #[arg(short, long, value_name = "FILE")]
        output: Vec<String>,
        /// Write each output to DIR under its input's file name.
        #[arg(long, value_name = "DIR", conflicts_with = "output")]
        out_dir: Option<PathBuf>,
        /// Write a Makefile-style dependency file: each output depends on
        /// its input and on every header and child source dpopt read (for
        /// a build system's DEPFILE).
        #[arg(long, value_name = "FILE")]
        depfile: Option<PathBuf>,
        /// Migrate every device-side `cudaDeviceSynchronize()` after launches
        /// (CDP1, not available on sm_90) to a continuation kernel launched
        /// into `cudaStreamTailLaunch`, with or without `#pragma dp`.
        #[arg(long)]
        migrate_sync: bool,
        #[command(flatten)]
        options: Common,
    },
    /// Parse and validate each INPUT; print diagnostics and the tuning
    /// macros of every launch site.
    Check {
        /// The annotated .cu files, or - for standard input.
        #[arg(required = true, value_name = "INPUT")]
        inputs: Vec<String>,
        /// Also explain every site (as `dpopt explain` does).
        #[arg(long)]
        explain: bool,
        /// Check as `transform --migrate-sync` would transform.
        #[arg(long)]
        migrate_sync: bool,
        #[command(flatten)]
        options: Common,
    },
    /// Explain, per launch site, what the transformation does: the thread
    /// count compared with the threshold, what is serialized, what
    /// aggregation stores, the knobs and their values, the checks passed.
    Explain {
        /// The annotated .cu files, or - for standard input.
        #[arg(required = true, value_name = "INPUT")]
        inputs: Vec<String>,
        #[command(flatten)]
        options: Common,
    },
    /// Run nvcc with every `.cu` input that holds `#pragma dp` transformed
    /// first (a drop-in for nvcc: `NVCC="dpopt nvcc"`, or a CMake compiler
    /// launcher). The nvcc run: the first argument when it is an nvcc (as a
    /// launcher gets it), else `$DPOPT_NVCC`, else `nvcc` on PATH.
    #[command(disable_help_flag = true)]
    Nvcc {
        /// nvcc's arguments, passed through unchanged (transformed inputs
        /// replaced, `-rdc=true` and `-lcudadevrt` added when missing).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "NVCC_ARGS"
        )]
        args: Vec<std::ffi::OsString>,
    },
    /// Tune the clauses of FILE's `#pragma dp` sites: build the program
    /// once per granularity with run-time knobs, run it with per-site knob
    /// values, and report (or `--write`) the best configuration.
    Tune(Box<dpopt::tune::TuneArgs>),
    /// Print a shell completion script for SHELL.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), or write one page per subcommand.
    Man {
        /// Write dpopt.1 and dpopt-SUBCOMMAND.1 into DIR instead.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
}

/// Options of every subcommand that reads sources.
#[derive(clap::Args)]
struct Common {
    #[command(flatten)]
    search: Search,
    /// Define NAME as VALUE (1 when omitted), as nvcc -D does (a comma
    /// separates several definitions, as in nvcc): dpopt uses it
    /// where it evaluates constants (a threshold decided at compile time),
    /// names (a clause value defined only on the command line) and `#if`
    /// conditions (branches ruled out for certain hold no constants); code
    /// in every `#if` branch is still transformed.
    #[arg(
        short = 'D',
        long = "define-macro",
        value_name = "NAME[=VALUE]",
        value_parser = parse_define,
        value_delimiter = ','
    )]
    defines: Vec<(String, String)>,
    /// How diagnostics are written on standard error.
    #[arg(long, value_enum, default_value_t = MessageFormat::Human)]
    message_format: MessageFormat,
    /// The name standard input is given in diagnostics and `#line`.
    #[arg(long, value_name = "NAME")]
    stdin_name: Option<String>,
}

fn parse_define(text: &str) -> Result<(String, String), String> {
    let (name, value) = match text.split_once('=') {
        Some((n, v)) => (n, v),
        None => (text, "1"),
    };
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok((name.to_string(), value.to_string()))
    } else {
        Err(format!("`{name}` is not a macro name"))
    }
}

/// Where child kernels defined outside INPUT are looked for.
#[derive(clap::Args)]
struct Search {
    /// Search DIR for headers included with `#include "..."` (after the
    /// including file's directory), as nvcc -I does; repeatable.
    #[arg(
        short = 'I',
        long = "include-dir",
        visible_alias = "include-path",
        value_name = "DIR"
    )]
    include_dirs: Vec<PathBuf>,
    /// Another source file (a separate translation unit) that defines
    /// kernels INPUT launches; repeatable.
    #[arg(long = "child-source", value_name = "FILE.cu")]
    child_sources: Vec<PathBuf>,
}

impl Common {
    /// The name an input is known by: its path, or `--stdin-name`.
    fn name(&self, input: &str) -> String {
        match (input, &self.stdin_name) {
            ("-", Some(name)) => name.clone(),
            ("-", None) => "<stdin>".to_string(),
            (path, _) => path.to_string(),
        }
    }

    fn options(&self, input: &str) -> Result<dpopt::unit::Options, String> {
        for path in &self.search.child_sources {
            if !path.is_file() {
                return Err(format!(
                    "cannot read `--child-source {}`: no such file",
                    path.display()
                ));
            }
        }
        let named = self.name(input);
        let dir_of = |p: &str| Path::new(p).parent().map(Path::to_path_buf);
        Ok(dpopt::unit::Options {
            include_dirs: self.search.include_dirs.clone(),
            child_sources: self.search.child_sources.clone(),
            input_dir: if input != "-" {
                dir_of(input)
            } else if self.stdin_name.is_some() {
                dir_of(&named)
            } else {
                None
            },
            defines: self.defines.clone(),
        })
    }

    fn read(&self, input: &str) -> Result<SourceFile, String> {
        read_input(input, &self.name(input))
    }

    /// An error that is not about a place in a source (a file that cannot
    /// be read or written), in the message format.
    fn fail(&self, message: &str, code: u8) -> ExitCode {
        match self.message_format {
            MessageFormat::Json => eprintln!(
                "{}",
                serde_json::json!({
                    "message": message,
                    "code": "dpopt::io",
                    "severity": "error",
                    "file": null,
                    "line": null,
                    "column": null,
                    "spans": [],
                    "help": null,
                })
            ),
            _ => eprintln!("dpopt: error: {message}"),
        }
        ExitCode::from(code)
    }

    fn report(&self, file: &SourceFile, outcome: &dpopt::Outcome) {
        let source = outcome.source(file);
        for d in &outcome.diagnostics {
            eprintln!(
                "{}",
                dpopt::message_format::render(d, source, self.message_format)
            );
        }
    }
}

/// Stack for the pipeline: every recursion in dpopt is bounded, and this
/// leaves a wide margin for the deepest input it still reads.
const STACK_BYTES: usize = 256 << 20;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let work = move || match cli.command {
        Command::Transform {
            inputs,
            output,
            out_dir,
            depfile,
            migrate_sync,
            options,
        } => transform(
            &inputs,
            &output,
            out_dir.as_deref(),
            depfile.as_deref(),
            migrate_sync,
            &options,
        ),
        Command::Check {
            inputs,
            explain,
            migrate_sync,
            options,
        } => check(&inputs, explain, migrate_sync, &options),
        Command::Explain { inputs, options } => explain(&inputs, &options),
        Command::Nvcc { args } => dpopt::nvcc_wrapper::main(&args),
        Command::Tune(args) => dpopt::tune::main(&args),
        Command::Completions { shell } => {
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "dpopt", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        Command::Man { out_dir: Some(dir) } => {
            match clap_mangen::generate_to(Cli::command(), &dir) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(
                    &format!(
                        "cannot write the manual pages into `{}`: {e}",
                        dir.display()
                    ),
                    1,
                ),
            }
        }
        Command::Man { out_dir: None } => {
            let mut out = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut out) {
                Ok(()) => match std::io::stdout().lock().write_all(&out) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => fail(&format!("cannot write standard output: {e}"), 1),
                },
                Err(e) => fail(&format!("cannot render the manual page: {e}"), 1),
            }
        }
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

fn read_input(input: &str, name: &str) -> Result<SourceFile, String> {
    if input == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(SourceFile::new(name, bytes))
    } else {
        let bytes = std::fs::read(input).map_err(|e| format!("cannot read `{input}`: {e}"))?;
        Ok(SourceFile::new(name, bytes))
    }
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("dpopt: error: {message}");
    ExitCode::from(code)
}

/// Where each input's output goes: a file, or standard output (`None`).
fn destinations(
    inputs: &[String],
    outputs: &[String],
    out_dir: Option<&Path>,
    stdin_name: Option<&str>,
) -> Result<Vec<Option<PathBuf>>, String> {
    let as_destination = |o: &String| (o != "-").then(|| PathBuf::from(o));
    if let Some(dir) = out_dir {
        if !dir.is_dir() {
            return Err(format!("`--out-dir {}` is not a directory", dir.display()));
        }
        let mut seen = std::collections::HashSet::new();
        return inputs
            .iter()
            .map(|input| {
                let named = match (input.as_str(), stdin_name) {
                    ("-", Some(name)) => name,
                    (path, _) => path,
                };
                let name = Path::new(named)
                    .file_name()
                    .filter(|_| named != "-")
                    .ok_or_else(|| {
                        "`--out-dir` needs a file name for standard input: give `--stdin-name NAME`, or use `-o`"
                            .to_string()
                    })?;
                if !seen.insert(name.to_os_string()) {
                    return Err(format!(
                        "two inputs named `{}` would be written to the same file in `{}`",
                        name.to_string_lossy(),
                        dir.display()
                    ));
                }
                Ok(Some(dir.join(name)))
            })
            .collect();
    }
    match (inputs.len(), outputs.len()) {
        (_, 0) if inputs.len() == 1 => Ok(vec![None]),
        (n, 0) => Err(format!(
            "{n} inputs: give `--out-dir DIR`, or one `-o FILE` per input"
        )),
        (n, m) if n == m => Ok(outputs.iter().map(as_destination).collect()),
        (n, m) => Err(format!(
            "{n} input(s) and {m} `-o`: give one `-o FILE` per input (or `--out-dir DIR`)"
        )),
    }
}

fn transform(
    inputs: &[String],
    outputs: &[String],
    out_dir: Option<&Path>,
    depfile: Option<&Path>,
    migrate: bool,
    common: &Common,
) -> ExitCode {
    if inputs.iter().filter(|i| *i == "-").count() > 1 {
        return fail("standard input (`-`) can be read once", 2);
    }
    let destinations = match destinations(inputs, outputs, out_dir, common.stdin_name.as_deref()) {
        Ok(d) => d,
        Err(e) => return fail(&e, 2),
    };
    // No output may overwrite an input (read later, or its own), nor
    // another output.
    let outputs: Vec<&PathBuf> = destinations.iter().flatten().collect();
    for out in &outputs {
        for input in inputs.iter().filter(|i| *i != "-") {
            if same_file(Path::new(input), out) {
                return fail(
                    &format!(
                        "`{}` would overwrite the input `{input}`; write the output to another file",
                        out.display()
                    ),
                    2,
                );
            }
        }
    }
    for (k, a) in outputs.iter().enumerate() {
        if outputs[..k].iter().any(|b| a == b || same_file(a, b)) {
            return fail(
                &format!("`{}` is named as the output of two inputs", a.display()),
                2,
            );
        }
    }
    if depfile.is_some() && destinations.iter().any(Option::is_none) {
        return fail(
            "`--depfile` needs output files (`-o FILE` or `--out-dir DIR`)",
            2,
        );
    }
    let mut status = ExitCode::SUCCESS;
    let mut rules = String::new();
    for (input, output) in inputs.iter().zip(&destinations) {
        match transform_one(input, output.as_deref(), migrate, common) {
            Ok(read) => {
                if let Some(out) = output {
                    rules.push_str(&dependency_rule(out, &read));
                }
            }
            Err(code) => status = code,
        }
    }
    if let (Some(path), true) = (depfile, status == ExitCode::SUCCESS) {
        if let Err(e) = dpopt::output::write_atomically(path, rules.as_bytes()) {
            return common.fail(&e, 1);
        }
    }
    status
}

/// `OUTPUT: INPUT HEADER...` as make reads it (spaces, `#`, `$` escaped).
fn dependency_rule(output: &Path, read: &[String]) -> String {
    let escape = |s: &str| s.replace(' ', "\\ ").replace('#', "\\#").replace('$', "$$");
    let mut rule = format!("{}:", escape(&output.display().to_string()));
    for file in read {
        rule.push_str(" \\\n  ");
        rule.push_str(&escape(file));
    }
    rule.push('\n');
    rule
}

/// Transform one input; the files read (the input, headers, child
/// sources), or the exit code of a failure.
fn transform_one(
    input: &str,
    output: Option<&Path>,
    migrate: bool,
    common: &Common,
) -> Result<Vec<String>, ExitCode> {
    let file = common.read(input).map_err(|e| common.fail(&e, 1))?;
    let options = common.options(input).map_err(|e| common.fail(&e, 1))?;
    let output_name = output.map_or("<stdout>".to_string(), |p| p.display().to_string());
    let outcome = dpopt::run_migrating(&file, Some(&options), migrate, &output_name, true);
    common.report(&file, &outcome);
    let mut read = vec![input.to_string()];
    if let Some(unit) = &outcome.unit {
        read.extend(unit.other_files().map(str::to_string));
    }
    let Some(bytes) = outcome.output else {
        return Err(ExitCode::from(1));
    };
    let written = match output {
        Some(path) => dpopt::output::write_atomically(path, &bytes),
        None => std::io::stdout()
            .lock()
            .write_all(&bytes)
            .map_err(|e| format!("cannot write standard output: {e}")),
    };
    match written {
        Ok(()) => Ok(read),
        Err(e) => Err(common.fail(&e, 1)),
    }
}

fn check(inputs: &[String], explain: bool, migrate: bool, common: &Common) -> ExitCode {
    if inputs.iter().filter(|i| *i == "-").count() > 1 {
        return fail("standard input (`-`) can be read once", 2);
    }
    let mut status = ExitCode::SUCCESS;
    for input in inputs {
        if check_one(input, explain, migrate, common) != ExitCode::SUCCESS {
            status = ExitCode::from(1);
        }
    }
    status
}

fn check_one(input: &str, explain: bool, migrate: bool, common: &Common) -> ExitCode {
    let file = match common.read(input) {
        Ok(f) => f,
        Err(e) => return common.fail(&e, 1),
    };
    let options = match common.options(input) {
        Ok(o) => o,
        Err(e) => return common.fail(&e, 1),
    };
    let outcome = dpopt::run_migrating(&file, Some(&options), migrate, "<check>", false);
    common.report(&file, &outcome);
    if common.message_format == MessageFormat::Json {
        // One line per input: its sites and their macros.
        let sites: Vec<serde_json::Value> = outcome
            .sites
            .iter()
            .map(|site| {
                let mut json = serde_json::json!({
                    "site": site.id,
                    "location": site.location,
                    "child": site.child,
                    "macros": site
                        .macros
                        .iter()
                        .map(|(m, v)| serde_json::json!({"name": m, "value": v}))
                        .collect::<Vec<_>>(),
                    "aggregation": site.aggregation,
                    "promotion": site.promotion,
                });
                if !site.allocations.is_empty() {
                    json["allocations"] = serde_json::json!(site.allocations);
                }
                json
            })
            .collect();
        // The syncs `--migrate-sync` migrates to continuations.
        let postwork: Vec<serde_json::Value> = outcome
            .postwork_sites
            .iter()
            .map(|(location, what)| serde_json::json!({"location": location, "message": what}))
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "file": file.name,
                "errors": outcome.has_errors(),
                "sites": sites,
                "postwork": postwork,
            })
        );
    } else {
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
            for a in &site.allocations {
                println!("    {a}");
            }
            if let Some(p) = &site.promotion {
                println!("    {p}");
            }
        }
        for (location, what) in &outcome.postwork_sites {
            println!("{location}: {what}");
        }
        if outcome.sites.is_empty() && outcome.postwork_sites.is_empty() && !outcome.has_errors() {
            println!(
                "{}: no `#pragma dp` launch site: `dpopt transform` leaves this file unchanged",
                file.name
            );
        }
    }
    if explain {
        print_explanations(&file, &options, common.message_format);
    }
    if outcome.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn explain(inputs: &[String], common: &Common) -> ExitCode {
    if inputs.iter().filter(|i| *i == "-").count() > 1 {
        return fail("standard input (`-`) can be read once", 2);
    }
    let mut status = ExitCode::SUCCESS;
    for input in inputs {
        let file = match common.read(input) {
            Ok(f) => f,
            Err(e) => {
                status = common.fail(&e, 1);
                continue;
            }
        };
        let options = match common.options(input) {
            Ok(o) => o,
            Err(e) => {
                status = common.fail(&e, 1);
                continue;
            }
        };
        let outcome = dpopt::run_with(&file, Some(&options), "<explain>", false);
        common.report(&file, &outcome);
        if outcome.has_errors() {
            status = ExitCode::from(1);
            continue;
        }
        print_explanations(&file, &options, common.message_format);
    }
    status
}

fn print_explanations(file: &SourceFile, options: &dpopt::unit::Options, format: MessageFormat) {
    let explanation = dpopt::explain::explain(file, Some(options));
    match format {
        MessageFormat::Json => {
            for site in &explanation.sites {
                println!("{}", site.to_json());
            }
        }
        _ => print!("{}", explanation.to_text()),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
