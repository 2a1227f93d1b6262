//! The contract oracle: run dpopt on one input and check every promise it
//! makes (see README.md for the list). Crashes and hangs cannot be seen from
//! inside the process; the campaign's worker supervision reports those.

use crate::rng::{fnv1a, mix};
use crate::scanner::{self, AnomalyKind, Form, Scan};
use dpopt::diagnostic::Diagnostic;
use dpopt::source::SourceFile;
use miette::{GraphicalReportHandler, GraphicalTheme};
use std::collections::BTreeSet;
use std::io::Read;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

macro_rules! classes {
    ($($class:ident = $name:literal: $what:literal;)*) => {
        /// A kind of contract violation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Class { $($class),* }

        impl Class {
            pub const ALL: &'static [Class] = &[$(Class::$class),*];

            pub fn name(self) -> &'static str {
                match self { $(Class::$class => $name),* }
            }

            /// What the contract says, in a few words.
            pub fn what(self) -> &'static str {
                match self { $(Class::$class => $what),* }
            }
        }
    };
}

classes! {
    Panic = "panic": "dpopt::run panicked";
    RenderPanic = "render_panic": "rendering a diagnostic with miette panicked";
    Crash = "crash": "the process died (abort, stack overflow, signal)";
    Hang = "hang": "no result within the time limit";
    SilentPragma = "silent_pragma": "a #pragma dp the preprocessor sees was neither applied nor refused";
    WarnedPragma = "warned_pragma": "a #pragma dp was not applied and only warned about, other than as hidden by a macro";
    PhantomSite = "phantom_site": "more sites than #pragma dp directives";
    PassthroughChanged = "passthrough_changed": "a file without #pragma dp did not come out byte-identical";
    BrokenOutput = "broken_output": "the output has lexical damage the input did not have";
    OutputOnError = "output_on_error": "an output together with an error";
    NoResult = "no_result": "neither an output nor an error";
    BadLocation = "bad_location": "a diagnostic's span or FILE:LINE:COL is not within the file";
    MisplacedDiagnostic = "misplaced_diagnostic": "an error points away from its cause";
    NotIdempotent = "not_idempotent": "transforming the output again transformed something";
    CliExitCode = "cli_exit_code": "the CLI exited with a code other than 0 or 1";
    CliStrayOutput = "cli_stray_output": "the CLI wrote or clobbered an output file on error";
    CliMismatch = "cli_mismatch": "the CLI disagrees with the library";
    NvccRejects = "nvcc_rejects": "nvcc rejects the output of a file it compiles";
}

impl Class {
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.iter().copied().find(|c| c.name() == name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub class: Class,
    pub detail: String,
}

impl Violation {
    pub fn new(class: Class, detail: impl Into<String>) -> Self {
        Violation {
            class,
            detail: detail.into(),
        }
    }
}

/// The name of the input in diagnostics, and of the output in `#line`
/// directives: the same as in the CLI sample, so that outputs compare.
pub const INPUT_NAME: &str = "in.cu";
pub const OUTPUT_NAME: &str = "out.cu";

/// How to run the CLI sample.
#[derive(Debug, Clone)]
pub struct CliCheck {
    pub dpopt: PathBuf,
    /// Scratch directory for the files of a CLI run.
    pub scratch: PathBuf,
    pub timeout: Duration,
    /// Create `out.cu` before the run: an error must leave it untouched.
    pub preexisting_output: bool,
}

/// What the oracle found on one input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub violations: Vec<Violation>,
    /// A behavioural signature for corpus feedback.
    pub signature: u64,
    pub sites: u32,
    pub errored: bool,
    /// The output, when asked for (the nvcc sample).
    pub output: Option<Vec<u8>>,
    /// Coverage features (filled in by the worker when instrumented).
    pub features: Vec<u32>,
}

static PANIC_MESSAGE: Mutex<Option<String>> = Mutex::new(None);

/// Replace the panic hook by one that records the message silently; the
/// oracle turns caught panics into violations.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".to_string());
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if let Ok(mut m) = PANIC_MESSAGE.lock() {
            *m = Some(format!("{message}{location}"));
        }
    }));
}

/// Run `f`, turning a panic into its message.
fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| {
        PANIC_MESSAGE
            .lock()
            .ok()
            .and_then(|mut m| m.take())
            .unwrap_or_else(|| "panic".to_string())
    })
}

fn one_line(s: &str, max: usize) -> String {
    let s = s.replace(['\n', '\r'], " ");
    if s.len() <= max {
        s
    } else {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    }
}

/// The last two non-blank lines of `s` (where a panic message is), on one line.
fn last_lines(s: &str, max: usize) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = lines[lines.len().saturating_sub(2)..].join(" | ");
    let start = last.len().saturating_sub(max);
    let start = (start..=last.len())
        .find(|&i| last.is_char_boundary(i))
        .unwrap_or(0);
    last[start..].to_string()
}

/// Check one input against the contract.
pub fn check(bytes: &[u8], cli: Option<&CliCheck>, keep_output: bool) -> Report {
    let mut report = Report::default();
    let scan = scanner::scan(bytes);
    let file = SourceFile::new(INPUT_NAME, bytes.to_vec());
    let outcome = match catch(|| dpopt::run(&file, OUTPUT_NAME, true)) {
        Ok(o) => o,
        Err(message) => {
            report
                .violations
                .push(Violation::new(Class::Panic, one_line(&message, 300)));
            report.signature = mix(0xdead, scan_signature(&scan));
            return report;
        }
    };
    let v = &mut report.violations;
    let errored = outcome.has_errors();
    report.errored = errored;
    report.sites = outcome.sites.len() as u32;
    check_diagnostics(&file, &outcome.diagnostics, "", v);

    match (&outcome.output, errored) {
        (Some(_), true) => v.push(Violation::new(
            Class::OutputOnError,
            "dpopt::run returned an output and an error",
        )),
        (None, false) => v.push(Violation::new(
            Class::NoResult,
            "dpopt::run returned no output and no error",
        )),
        _ => {}
    }

    let hard = scan.first_hard_anomaly();
    let forms = describe_forms(&scan);
    match &outcome.output {
        Some(out) => {
            let sites = outcome.sites.len();
            let unapplied = Unapplied::find(&file, &scan, &outcome);
            if sites < scan.certain() {
                v.extend(unapplied.violation(&scan, sites, &forms));
            }
            // A file the preprocessor rejects (`hard`: unterminated comment
            // or raw string, invalid directive, ...) may be transformed,
            // passed through or refused.
            if sites > scan.total() && hard.is_none() {
                v.push(Violation::new(
                    Class::PhantomSite,
                    format!("{sites} site(s) for {} #pragma dp", scan.total()),
                ));
            }
            if scan.total() == 0 && hard.is_none() && out.as_slice() != bytes {
                v.push(Violation::new(
                    Class::PassthroughChanged,
                    format!(
                        "no #pragma dp, output differs from the input ({} -> {} bytes)",
                        bytes.len(),
                        out.len()
                    ),
                ));
            }
            if out.as_slice() != bytes {
                check_output(&scan, &unapplied, out, v);
            }
        }
        None => {
            if scan.total() == 0 && hard.is_none() {
                let first = outcome
                    .diagnostics
                    .iter()
                    .find(|d| d.is_error())
                    .map(|d| {
                        format!(
                            "{} at {}: {}",
                            d.kind.code(),
                            file.location(d.span.start()),
                            d.kind.message()
                        )
                    })
                    .unwrap_or_default();
                v.push(Violation::new(
                    Class::PassthroughChanged,
                    format!(
                        "a file without #pragma dp was rejected: {}",
                        one_line(&first, 200)
                    ),
                ));
            }
            check_misplaced(&file, &scan, &outcome.diagnostics, v);
        }
    }

    if let Some(cli) = cli {
        check_cli(bytes, outcome.output.as_deref(), cli, v);
    }

    let mut codes: Vec<&str> = outcome.diagnostics.iter().map(|d| d.kind.code()).collect();
    codes.sort_unstable();
    codes.dedup();
    let mut sig = mix(
        scan_signature(&scan),
        match &outcome.output {
            Some(o) if o.as_slice() == bytes => 1,
            Some(_) => 2,
            None => 3,
        },
    );
    sig = mix(sig, fnv1a(codes.join(",").as_bytes()));
    sig = mix(sig, bucket(outcome.sites.len() as u64));
    report.signature = sig;
    // A clause that names something the file does not declare compiles only
    // where a header or `-D` supplies it; dpopt warned (`dpopt::unseen_name`).
    let unseen = outcome
        .diagnostics
        .iter()
        .any(|d| d.kind.code() == "dpopt::unseen_name");
    if keep_output && !outcome.sites.is_empty() && !unseen {
        report.output = outcome.output;
    }
    report
}

/// The warning dpopt gives for a pragma that a macro hides.
const PRAGMA_IN_MACRO: &str = "dpopt::pragma_in_macro";

/// The certain pragmas that got no site: how many have no diagnostic at
/// all, and which warnings (codes, and pragma forms) cover the others.
#[derive(Debug, Default)]
struct Unapplied {
    silent: usize,
    warned_codes: BTreeSet<&'static str>,
    warned_forms: BTreeSet<Form>,
}

impl Unapplied {
    /// Each site is matched with one pragma: the one whose span holds the
    /// site's location, or the nearest one on the same line; a promoted
    /// site's `#pragma dp acquire` (its marker) is applied with it.
    fn find(file: &SourceFile, scan: &Scan, outcome: &dpopt::Outcome) -> Self {
        let mut applied = vec![false; scan.pragmas.len()];
        let locations = outcome
            .sites
            .iter()
            .flat_map(|s| std::iter::once(&s.location).chain(s.marker.iter()));
        for location in locations {
            let mut parts = location.rsplit(':');
            let (Some(col), Some(line)) = (parts.next(), parts.next()) else {
                continue;
            };
            let (Ok(col), Ok(line)) = (col.parse::<usize>(), line.parse::<usize>()) else {
                continue;
            };
            let Some(&line_start) = file.line_starts().get(line.wrapping_sub(1)) else {
                continue;
            };
            let at = line_start + col.saturating_sub(1);
            let best = scan
                .pragmas
                .iter()
                .enumerate()
                .filter(|(i, p)| {
                    !applied[*i]
                        && file.line_of(p.span.start) <= line
                        && line <= file.line_of(p.span.end)
                })
                .min_by_key(|(_, p)| {
                    if p.span.contains(&at) {
                        0
                    } else {
                        p.span.start.abs_diff(at) + 1
                    }
                })
                .map(|(i, _)| i);
            if let Some(i) = best {
                applied[i] = true;
            }
        }
        let overlaps = |a: &Range<usize>, b: &Range<usize>| {
            a.start < b.end.max(b.start + 1) && b.start < a.end.max(a.start + 1)
        };
        let mut u = Unapplied::default();
        for (p, _) in scan
            .pragmas
            .iter()
            .zip(&applied)
            .filter(|(p, &applied)| p.certain && !applied)
        {
            // The warning about this pragma (a pragma hidden in a macro may
            // also lie inside a span that another warning points at).
            let covering = |d: &&Diagnostic| {
                !d.is_error()
                    && std::iter::once(&d.span)
                        .chain(d.notes.iter().map(|(s, _)| s))
                        .any(|s| overlaps(&s.range(), &p.span))
            };
            let warning = outcome
                .diagnostics
                .iter()
                .filter(covering)
                .find(|d| d.kind.code() == PRAGMA_IN_MACRO)
                .or_else(|| outcome.diagnostics.iter().find(covering));
            match warning {
                Some(d) => {
                    u.warned_codes.insert(d.kind.code());
                    u.warned_forms.insert(p.form);
                }
                None => u.silent += 1,
            }
        }
        u
    }

    /// `warned_pragma` when every unapplied pragma has a warning, else
    /// `silent_pragma`. A pragma that a macro hides (`#define P(x)
    /// _Pragma(#x)`) and that dpopt warns about as such
    /// (`dpopt::pragma_in_macro`) is what the contract asks for (contract
    /// issue, item 6: "warn, pointing at it, where a macro hides it"): no
    /// violation.
    fn violation(&self, scan: &Scan, sites: usize, forms: &str) -> Option<Violation> {
        if self.silent == 0 && self.warned_codes.iter().all(|c| *c == PRAGMA_IN_MACRO) {
            return None;
        }
        let counts = format!(
            "{} #pragma dp the preprocessor sees ({forms}), {sites} site(s), no error",
            scan.certain()
        );
        Some(if self.silent == 0 {
            let codes: Vec<&str> = self.warned_codes.iter().copied().collect();
            Violation::new(
                Class::WarnedPragma,
                format!("{counts}; warned: {}", codes.join(", ")),
            )
        } else {
            Violation::new(Class::SilentPragma, counts)
        })
    }
}

/// A log2-ish bucket, as AFL counts hits.
pub fn bucket(n: u64) -> u64 {
    match n {
        0..=3 => n,
        4..=7 => 4,
        8..=15 => 5,
        16..=31 => 6,
        32..=127 => 7,
        _ => 8,
    }
}

/// The input's side of the signature: pragma forms, certainty, anomalies
/// and the token-kind histogram, bucketed.
fn scan_signature(scan: &Scan) -> u64 {
    let mut h = 0u64;
    for p in &scan.pragmas {
        h = mix(h, (p.form as u64) << 1 | p.certain as u64);
    }
    let kinds: BTreeSet<AnomalyKind> = scan.anomalies.iter().map(|a| a.kind).collect();
    for k in kinds {
        h = mix(h, 100 + k as u64);
    }
    for (i, &n) in scan.kind_counts.iter().enumerate() {
        h = mix(h, (i as u64) << 8 | bucket(n as u64 / 16));
    }
    mix(h, scan.stray_comment_ends.min(3) as u64)
}

fn describe_forms(scan: &Scan) -> String {
    let forms: BTreeSet<String> = scan
        .pragmas
        .iter()
        .filter(|p| p.certain)
        .map(|p| format!("{:?}", p.form).to_lowercase())
        .collect();
    forms.into_iter().collect::<Vec<_>>().join(", ")
}

/// Spans, FILE:LINE:COL and rendering of every diagnostic.
fn check_diagnostics(file: &SourceFile, diags: &[Diagnostic], stage: &str, v: &mut Vec<Violation>) {
    let len = file.bytes.len();
    let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor());
    for d in diags {
        let code = d.kind.code();
        let spans = std::iter::once(&d.span).chain(d.notes.iter().map(|(s, _)| s));
        for s in spans {
            if s.start() > s.end() || s.end() > len {
                v.push(Violation::new(
                    Class::BadLocation,
                    format!(
                        "{code}{stage}: span {}..{} outside a file of {len} bytes",
                        s.start(),
                        s.end()
                    ),
                ));
            }
        }
        if d.span.start() > len {
            continue;
        }
        let (line, col) = file.line_col(d.span.start());
        let starts = file.line_starts();
        let line_start = starts[line - 1];
        let rest = &file.bytes[line_start..];
        let mut line_len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        if line_len < rest.len() && line_len > 0 && rest[line_len - 1] == b'\r' {
            line_len -= 1;
        }
        if line > starts.len() || col > line_len + 1 {
            v.push(Violation::new(
                Class::BadLocation,
                format!(
                    "{code}{stage}: {}:{line}:{col} is not within the file (line length {line_len})",
                    file.name
                ),
            ));
        }
        let location = file.location(d.span.start());
        match catch(|| {
            let mut out = String::new();
            handler
                .render_report(&mut out, d.to_report(file).as_ref())
                .map(|()| out)
        }) {
            Err(message) => v.push(Violation::new(
                Class::RenderPanic,
                format!("{code}{stage} at {location}: {}", one_line(&message, 300)),
            )),
            Ok(Err(e)) => v.push(Violation::new(
                Class::RenderPanic,
                format!("{code}{stage} at {location}: render error {e}"),
            )),
            Ok(Ok(text)) => {
                if !text.contains(&format!("{location}:")) {
                    v.push(Violation::new(
                        Class::BadLocation,
                        format!("{code}{stage}: the rendered report does not name {location}"),
                    ));
                }
            }
        }
        // The CLI prints reports with `{:?}` (miette's installed handler).
        if let Err(message) = catch(|| format!("{:?}", d.to_report(file))) {
            v.push(Violation::new(
                Class::RenderPanic,
                format!(
                    "{code}{stage} at {location} (Debug): {}",
                    one_line(&message, 300)
                ),
            ));
        }
    }
}

/// A transformed output: no pragma left, no new lexical damage, and a
/// second transformation changes nothing.
fn check_output(scan: &Scan, unapplied: &Unapplied, out: &[u8], v: &mut Vec<Violation>) {
    let out_scan = scanner::scan(out);
    // Uses of a macro that hides a pragma stay as written, and pragmas dpopt
    // warned about stay too (generated code may copy them): `unapplied`
    // judges those on the input. Any other pragma left is silent.
    let left = out_scan
        .pragmas
        .iter()
        .filter(|p| p.certain && p.form != Form::Macro && !unapplied.warned_forms.contains(&p.form))
        .count();
    if left > 0 {
        v.push(Violation::new(
            Class::SilentPragma,
            format!(
                "the output still holds {left} #pragma dp ({})",
                describe_forms(&out_scan)
            ),
        ));
    }
    // Generated code copies the child's body, damage included: compare only
    // when the input is clean. (Unbalanced brackets are not checked: an
    // invalid parameter list copied into a generated one is garbage in,
    // garbage out, which the contract allows for input that does not
    // compile.)
    let mut damage = Vec::new();
    if scan.stray_comment_ends == 0 && out_scan.stray_comment_ends > 0 {
        damage.push(format!("{} stray `*/`", out_scan.stray_comment_ends));
    }
    if scan.hard_anomalies() == 0 && out_scan.hard_anomalies() > 0 {
        damage.push(format!("{:?}", out_scan.first_hard_anomaly()));
    }
    if !damage.is_empty() {
        v.push(Violation::new(Class::BrokenOutput, damage.join("; ")));
    }

    // Idempotence.
    let file = SourceFile::new(OUTPUT_NAME, out.to_vec());
    let second = match catch(|| dpopt::run(&file, "out2.cu", true)) {
        Ok(o) => o,
        Err(message) => {
            v.push(Violation::new(
                Class::Panic,
                format!("second run, on the output: {}", one_line(&message, 300)),
            ));
            return;
        }
    };
    check_diagnostics(&file, &second.diagnostics, " (second run)", v);
    match &second.output {
        Some(out2) if out2.as_slice() == out && second.sites.is_empty() => {}
        Some(_) => v.push(Violation::new(
            Class::NotIdempotent,
            format!(
                "the second run rewrote the output ({} new site(s))",
                second.sites.len()
            ),
        )),
        None if out_scan.total() == 0 => {
            let first = second
                .diagnostics
                .iter()
                .find(|d| d.is_error())
                .map_or(String::new(), |d| {
                    format!("{} at {}", d.kind.code(), file.location(d.span.start()))
                });
            v.push(Violation::new(
                Class::NotIdempotent,
                format!("the second run rejected the output, which has no #pragma dp: {first}"),
            ))
        }
        None => {}
    }
}

/// An unterminated `/*` or raw string swallows closing brackets: an
/// "unbalanced brackets" error must point at it, not at the opening bracket
/// it left open.
fn check_misplaced(file: &SourceFile, scan: &Scan, diags: &[Diagnostic], v: &mut Vec<Violation>) {
    let Some(cause) = scan.first_hard_anomaly() else {
        return;
    };
    if !matches!(
        cause.kind,
        AnomalyKind::UnterminatedBlockComment | AnomalyKind::UnterminatedRawString
    ) {
        return;
    }
    // The construct is the cause when the brackets balance without it:
    // blank its opening `/*` (or the quote of `R"`) and scan again.
    if scan.brackets.balanced() {
        return;
    }
    let mut repaired = file.bytes.clone();
    let opener = match cause.kind {
        AnomalyKind::UnterminatedBlockComment => cause.at..cause.at + 2,
        _ => match repaired[cause.at..].iter().position(|&b| b == b'"') {
            Some(q) => cause.at + q..cause.at + q + 1,
            None => return,
        },
    };
    repaired[opener].fill(b' ');
    if !scanner::scan(&repaired).brackets.balanced() {
        return;
    }
    let cause_line = file.line_of(cause.at);
    for d in diags
        .iter()
        .filter(|d| d.is_error() && d.kind.code() == "dpopt::unbalanced")
    {
        let points_at_cause = std::iter::once(&d.span)
            .chain(d.notes.iter().map(|(s, _)| s))
            .any(|s| s.start() <= file.bytes.len() && file.line_of(s.start()) == cause_line);
        if !points_at_cause {
            v.push(Violation::new(
                Class::MisplacedDiagnostic,
                format!(
                    "dpopt::unbalanced at {}; the cause is the {} at {}",
                    file.location(d.span.start()),
                    match cause.kind {
                        AnomalyKind::UnterminatedBlockComment => "unterminated `/*`",
                        _ => "unterminated raw string",
                    },
                    file.location(cause.at)
                ),
            ));
        }
    }
}

static SCRATCH_COUNTER: AtomicU64 = AtomicU64::new(0);

const SENTINEL: &[u8] = b"/* dpopt-fuzz: an older output that an error must not clobber */\n";

/// Run the `dpopt` binary on the input: `transform in.cu -o out.cu` and
/// `check in.cu`, and compare with the library's outcome.
fn check_cli(bytes: &[u8], library_output: Option<&[u8]>, cli: &CliCheck, v: &mut Vec<Violation>) {
    let n = SCRATCH_COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = cli.scratch.join(format!("cli-{}-{n}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err()
        || std::fs::write(dir.join(INPUT_NAME), bytes).is_err()
    {
        return;
    }
    if cli.preexisting_output {
        let _ = std::fs::write(dir.join(OUTPUT_NAME), SENTINEL);
    }
    let transform = run_with_timeout(
        Command::new(&cli.dpopt)
            .args(["transform", INPUT_NAME, "-o", OUTPUT_NAME])
            .current_dir(&dir),
        cli.timeout,
    );
    match transform {
        Err(e) => v.push(Violation::new(
            Class::CliMismatch,
            format!("cannot run dpopt: {e}"),
        )),
        Ok(None) => v.push(Violation::new(
            Class::Hang,
            format!("`dpopt transform` ran longer than {:?}", cli.timeout),
        )),
        Ok(Some(run)) => {
            let written = std::fs::read(dir.join(OUTPUT_NAME)).ok();
            match run.code {
                Some(0) => {
                    if library_output.is_none() {
                        v.push(Violation::new(
                            Class::CliMismatch,
                            "`dpopt transform` succeeded where the library reported an error",
                        ));
                    } else if written.as_deref() != library_output {
                        v.push(Violation::new(
                            Class::CliMismatch,
                            "`dpopt transform -o` wrote other bytes than the library's output",
                        ));
                    }
                }
                Some(1) => {
                    let expected = cli.preexisting_output.then_some(SENTINEL);
                    if written.as_deref() != expected {
                        v.push(Violation::new(
                            Class::CliStrayOutput,
                            if cli.preexisting_output {
                                "`dpopt transform -o out.cu` failed and changed the existing out.cu"
                            } else {
                                "`dpopt transform -o out.cu` failed and left an out.cu"
                            },
                        ));
                    }
                    if library_output.is_some() {
                        v.push(Violation::new(
                            Class::CliMismatch,
                            format!(
                                "`dpopt transform` failed where the library succeeded: {}",
                                one_line(&run.stderr_tail, 200)
                            ),
                        ));
                    } else if !run.stderr_head.contains(&format!("{INPUT_NAME}:")) {
                        v.push(Violation::new(
                            Class::BadLocation,
                            format!(
                                "`dpopt transform` failed without naming {INPUT_NAME}:LINE:COL: {}",
                                one_line(&run.stderr_head, 200)
                            ),
                        ));
                    }
                }
                code => v.push(Violation::new(
                    Class::CliExitCode,
                    format!(
                        "`dpopt transform` exited with {}: {}",
                        code.map_or("a signal".to_string(), |c| c.to_string()),
                        last_lines(&run.stderr_tail, 300)
                    ),
                )),
            }
        }
    }
    let stray: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != INPUT_NAME && n != OUTPUT_NAME)
                .collect()
        })
        .unwrap_or_default();
    if !stray.is_empty() {
        v.push(Violation::new(
            Class::CliStrayOutput,
            format!("`dpopt transform` left files behind: {}", stray.join(", ")),
        ));
    }
    if let Ok(Some(run)) = run_with_timeout(
        Command::new(&cli.dpopt)
            .args(["check", INPUT_NAME])
            .current_dir(&dir),
        cli.timeout,
    ) {
        let expected = if library_output.is_some() { 0 } else { 1 };
        match run.code {
            Some(c) if c == expected => {}
            Some(c @ (0 | 1)) => v.push(Violation::new(
                Class::CliMismatch,
                format!("`dpopt check` exited with {c}, the library says {expected}"),
            )),
            code => v.push(Violation::new(
                Class::CliExitCode,
                format!(
                    "`dpopt check` exited with {}: {}",
                    code.map_or("a signal".to_string(), |c| c.to_string()),
                    last_lines(&run.stderr_tail, 300)
                ),
            )),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const STDERR_HEAD: usize = 8 * 1024;
const STDERR_TAIL: usize = 2 * 1024;

/// The end of a process run: its exit code (`None` for a signal) and the
/// head and tail of its standard error (the tail after the head).
pub struct Finished {
    pub code: Option<i32>,
    pub stderr_head: String,
    pub stderr_tail: String,
}

/// Run a command with a time limit; `Ok(None)` when it had to be killed.
/// Standard output is discarded, standard error is kept (its tail).
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> std::io::Result<Option<Finished>> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr = child.stderr.take().expect("piped stderr");
    // Keep the head (where the first diagnostic names its location) and
    // the tail (where a panic or abort message is).
    let reader = std::thread::spawn(move || {
        let (mut head, mut tail) = (Vec::new(), Vec::new());
        let mut buf = [0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut chunk = &buf[..n];
            if head.len() < STDERR_HEAD {
                let take = chunk.len().min(STDERR_HEAD - head.len());
                head.extend_from_slice(&chunk[..take]);
                chunk = &chunk[take..];
            }
            tail.extend_from_slice(chunk);
            if tail.len() > 64 * 1024 {
                tail.drain(..tail.len() - STDERR_TAIL);
            }
        }
        (head, tail)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let (head, tail) = reader.join().unwrap_or_default();
    Ok(status.map(|s| Finished {
        code: s.code(),
        stderr_head: String::from_utf8_lossy(&head).into_owned(),
        stderr_tail: String::from_utf8_lossy(&tail[tail.len().saturating_sub(STDERR_TAIL)..])
            .into_owned(),
    }))
}

/// Where the CLI sample and nvcc put their files.
pub fn default_scratch() -> PathBuf {
    std::env::temp_dir().join(format!("dpopt-fuzz-{}", std::process::id()))
}

/// Remove a scratch directory (best effort).
pub fn remove_scratch(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}
