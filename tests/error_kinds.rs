//! Every kind of diagnostic dpopt can report, triggered by a small CUDA
//! program: the test checks the exact code, the 1-based line and column of
//! the primary span's start, the exact text of that span, the severity, and
//! that no output is written when it is an error; and, as an insta snapshot
//! (`tests/snapshots/error_kinds__json_*.snap`), the diagnostic as
//! `--message-format json` writes it.
//!
//! One `#[test]` per kind (the `case!` table below), so that one failure does
//! not hide the others. `every_kind_is_covered` keeps the table complete: an
//! exhaustive `match` over `DiagnosticKind` stops the build when a variant is
//! added, and the test checks that every arm of that match has a case.

use dpopt::diagnostic::{ClauseName, Unseen};
use dpopt::diagnostic::{Diagnostic, DiagnosticKind};
use dpopt::source::SourceFile;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Severity {
    Error,
    Warning,
}

/// `text` without its first newline and without the indentation common to
/// its lines, so that inputs can be written indented in the table (lines
/// and columns are those of the unindented text).
fn unindent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() {
            out.push_str(line.trim_start_matches(' '));
        } else {
            out.push_str(&line[indent..]);
        }
    }
    out
}

/// Run dpopt on `input` (unindented) and check the first diagnostic with
/// `code`: its severity, the line and column where its primary span starts,
/// and the text of that span. An error must leave no output; a warning alone
/// must not stop it. Returns the diagnostic for further checks.
fn case(
    name: &str,
    input: &str,
    code: &str,
    severity: Severity,
    line: usize,
    column: usize,
    span: &str,
) -> Diagnostic {
    let text = unindent(input);
    // Text after a line `// --- child source ---` is another translation
    // unit, named with `--child-source` (written under target/, a path
    // relative to the crate so that the snapshots name it the same way
    // everywhere).
    const CHILD_SOURCE: &str = "// --- child source ---\n";
    let (text, child) = match text.split_once(CHILD_SOURCE) {
        Some((input, child)) => (input.to_string(), Some(child.to_string())),
        None => (text, None),
    };
    let options = child.map(|child| {
        let dir = std::path::PathBuf::from("target/error_kinds").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("child.cu");
        std::fs::write(&path, child).unwrap();
        dpopt::unit::Options {
            child_sources: vec![path],
            ..Default::default()
        }
    });
    let file = SourceFile::new("k.cu", text.as_bytes().to_vec());
    // A program that says so is transformed as `--migrate-sync` does.
    let migrate = text.contains("// dpopt: --migrate-sync");
    let outcome = dpopt::run_migrating(&file, options.as_ref(), migrate, "out.cu", true);
    // The unit (the input and the files read with it), where spans lie.
    let unit = outcome.unit.as_ref().unwrap_or(&file);
    let listing: Vec<String> = outcome
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "  {} at {} {:?}: {}",
                d.kind.code(),
                unit.location(d.span.start()),
                &unit.view[d.span.range()],
                d.kind.message()
            )
        })
        .collect();
    let listing = listing.join("\n");
    let d = outcome
        .diagnostics
        .iter()
        .find(|d| d.kind.code() == code)
        .unwrap_or_else(|| panic!("{name}: no `{code}` among the diagnostics:\n{listing}"))
        .clone();
    // A span in the child source: its line and column there.
    let at = unit.location(d.span.start());
    let mut parts = at.rsplitn(3, ':');
    let column_at: usize = parts.next().unwrap().parse().unwrap();
    let line_at: usize = parts.next().unwrap().parse().unwrap();
    assert_eq!(
        (line_at, column_at),
        (line, column),
        "{name}: line and column of `{code}` ({at}); diagnostics:\n{listing}"
    );
    assert_eq!(
        &unit.view[d.span.range()],
        span,
        "{name}: span of `{code}`; diagnostics:\n{listing}"
    );
    let found = if d.is_error() {
        Severity::Error
    } else {
        Severity::Warning
    };
    assert_eq!(found, severity, "{name}: severity of `{code}`");
    // The diagnostic as `--message-format json` writes it.
    insta::assert_snapshot!(
        format!("json_{name}"),
        serde_json::to_string_pretty(&dpopt::message_format::json(
            &d,
            outcome.unit.as_ref().unwrap_or(&file)
        ))
        .unwrap()
    );
    match severity {
        Severity::Error => assert!(
            outcome.output.is_none(),
            "{name}: an output was written despite `{code}`"
        ),
        Severity::Warning => {
            assert!(
                !outcome.has_errors(),
                "{name}: the warning comes with errors:\n{listing}"
            );
            assert!(
                outcome.output.is_some(),
                "{name}: a warning alone stopped the output"
            );
        }
    }
    d
}

/// One test: `name` runs `input` and expects a diagnostic of `kind` (a
/// pattern over `DiagnosticKind`) with `code`, `severity`, starting at
/// `line`:`column`, whose primary span is the text `span`.
macro_rules! case {
    {
        name: $name:ident,
        input: $input:expr,
        kind: $kind:pat,
        code: $code:literal,
        severity: $severity:ident,
        line: $line:literal,
        column: $column:literal,
        span: $span:expr $(,)?
    } => {
        #[test]
        fn $name() {
            #[allow(unused_imports)]
            use DiagnosticKind::*;
            let d = case(
                stringify!($name),
                &$input,
                $code,
                Severity::$severity,
                $line,
                $column,
                $span,
            );
            assert!(
                matches!(d.kind, $kind),
                "{}: expected {}, found {:?}",
                stringify!($name),
                stringify!($kind),
                d.kind
            );
        }
    };
}

// ------------------------------------------------------------ clauses ----

case! {
    name: unknown_clause,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp treshold(128)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: UnknownClause { .. },
    code: "dpopt::unknown_clause",
    severity: Error,
    line: 7,
    column: 12,
    span: "treshold",
}

case! {
    name: missing_arguments,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(2) threshold
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: MissingArguments { .. },
    code: "dpopt::clause_arguments",
    severity: Error,
    line: 7,
    column: 23,
    span: "threshold",
}

case! {
    name: unclosed_arguments,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: UnclosedArguments { .. },
    code: "dpopt::clause_arguments",
    severity: Error,
    line: 7,
    column: 12,
    span: "threshold(64",
}

case! {
    name: wrong_argument_count,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(2, 4)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: WrongArgumentCount { .. },
    code: "dpopt::clause_arguments",
    severity: Error,
    line: 7,
    column: 12,
    span: "coarsen(2, 4)",
}

case! {
    name: group_size_without_multiblock,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp consldt(warp, 4)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: WrongArgumentCount { found: 2, .. },
    code: "dpopt::clause_arguments",
    severity: Error,
    line: 7,
    column: 26,
    span: "4",
}

case! {
    name: not_positive,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(0)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NotPositive { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 7,
    column: 22,
    span: "0",
}

case! {
    name: negative_is_not_positive,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(-2)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NotPositive { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 7,
    column: 20,
    span: "-2",
}

case! {
    name: not_an_integer,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(2.5)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NotAnInteger { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 7,
    column: 20,
    span: "2.5",
}

case! {
    name: too_large,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(99999999999999999999999)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: TooLarge { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 7,
    column: 20,
    span: "99999999999999999999999",
}

case! {
    name: duplicate_clause,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(2) coarsen(4)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: DuplicateClause { .. },
    code: "dpopt::duplicate_clause",
    severity: Error,
    line: 7,
    column: 23,
    span: "coarsen(4)",
}

case! {
    name: bad_granularity,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp consldt(blok)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: BadGranularity { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 7,
    column: 20,
    span: "blok",
}

case! {
    name: bad_buffer_kind,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp consldt(grid) buffer(pool, 4096)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: BadBufferKind { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 7,
    column: 33,
    span: "pool",
}

case! {
    name: bad_work_variable,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp consldt(warp) work(n + 1)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: BadWorkVariable { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 7,
    column: 31,
    span: "n + 1",
}

case! {
    name: above_limit,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64) parent_threads(2048)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: AboveLimit { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 7,
    column: 41,
    span: "2048",
}

case! {
    name: parent_threads_differ,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64) parent_threads(256)
          child<<<(n + 31) / 32, 32>>>(a, n);
        #pragma dp coarsen(2) parent_threads(128)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: KernelClauseDiffers { .. },
    code: "dpopt::parent_threads_differ",
    severity: Error,
    line: 9,
    column: 1,
    span: "#pragma dp coarsen(2) parent_threads(128)",
}

case! {
    name: needs_aggregation,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64) agg_threshold(8)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NeedsAggregation { .. },
    code: "dpopt::needs_consldt",
    severity: Error,
    line: 7,
    column: 26,
    span: "agg_threshold(8)",
}

case! {
    name: needs_threshold,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(2) child_threads(n)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NeedsThreshold { .. },
    code: "dpopt::needs_threshold",
    severity: Error,
    line: 7,
    column: 23,
    span: "child_threads(n)",
}

case! {
    name: not_implemented_yet,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp consldt(grid) buffer(custom, 64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NotImplementedYet { .. },
    code: "dpopt::not_implemented",
    severity: Error,
    line: 7,
    column: 26,
    span: "buffer(custom, 64)",
}

case! {
    name: malformed_pragma,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(4) )
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: MalformedPragma,
    code: "dpopt::malformed_pragma",
    severity: Error,
    line: 7,
    column: 25,
    span: ")",
}

case! {
    name: too_deep,
    input: format!(
        "
        __global__ void child(int *a, int n) {{
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }}

        __global__ void parent(int *a, int n) {{
        #pragma dp threshold(64) child_threads({}n{})
          child<<<n, 1>>>(a, n);
        }}
        ",
        "(".repeat(256),
        ")".repeat(256)
    ),
    kind: TooDeep { limit: 256 },
    code: "dpopt::too_deep",
    severity: Error,
    line: 7,
    // `child_threads(` opens the first bracket at column 39; the 257th is
    // 256 columns further.
    column: 295,
    span: "(",
}

// ---------------------------------------------------- pragma placement ----

case! {
    name: duplicate_pragma,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
        #pragma dp coarsen(2)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: DuplicatePragma,
    code: "dpopt::duplicate_pragma",
    severity: Error,
    line: 8,
    column: 1,
    span: "#pragma dp coarsen(2)",
}

case! {
    name: no_launch_after_pragma,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          a[0] = 1;
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NoLaunchAfterPragma { .. },
    code: "dpopt::no_launch",
    severity: Error,
    line: 8,
    column: 3,
    span: "a",
}

case! {
    name: no_launch_before_end_of_file,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        #pragma dp threshold(64)
    ",
    kind: NoLaunchAfterPragma { .. },
    code: "dpopt::no_launch",
    severity: Error,
    line: 6,
    column: 1,
    span: "#pragma dp threshold(64)",
}

case! {
    name: host_side_launch,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        int main() {
          int *a = 0;
        #pragma dp threshold(64)
          child<<<4, 32>>>(a, 100);
          return 0;
        }
    ",
    kind: HostSideLaunch { .. },
    code: "dpopt::host_launch",
    severity: Error,
    line: 9,
    column: 3,
    span: "child<<<4, 32>>>(a, 100);",
}

case! {
    name: launch_outside_function,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        struct Launcher {
          __device__ void run(int *a, int n) {
        #pragma dp threshold(64)
            child<<<(n + 31) / 32, 32>>>(a, n);
          }
        };
    ",
    kind: LaunchOutsideFunction,
    code: "dpopt::launch_context",
    severity: Error,
    line: 9,
    column: 5,
    span: "child<<<(n + 31) / 32, 32>>>(a, n);",
}

// ------------------------------------------------------------ launches ----

case! {
    name: kernel_not_defined,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          other<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: KernelNotDefined { .. },
    code: "dpopt::unknown_kernel",
    severity: Error,
    line: 8,
    column: 3,
    span: "other",
}

case! {
    name: child_helper,
    input: "
        __global__ void child(int *a, int n);

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(8)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
        // --- child source ---
        static __device__ void put(int *a, int i) { a[i] = i; }

        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) put(a, i);
        }
    ",
    kind: ChildHelperHidden { declarable: false, .. },
    code: "dpopt::child_helper",
    severity: Error,
    line: 5,
    column: 3,
    span: "child",
}

case! {
    name: coarsen_pending,
    input: "
        __global__ void fill(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = 1;
        }

        __global__ void refine(int *a, int n, int depth) {
          if (threadIdx.x == 0 && depth < 4) {
            if (n > 64) {
        #pragma dp coarsen(4)
              refine<<<4, 32>>>(a + blockIdx.x * n / 4, n / 4, depth + 1);
            } else {
              fill<<<1, 64>>>(a + blockIdx.x * n, n);
            }
          }
        }
    ",
    kind: CoarsenPending { .. },
    code: "dpopt::coarsen_pending",
    severity: Warning,
    line: 9,
    column: 1,
    span: "#pragma dp coarsen(4)",
}

case! {
    name: recursion_pending,
    input: "
        __global__ void fill(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = 1;
        }

        __global__ void refine(int *a, int n, int depth) {
          if (threadIdx.x == 0 && depth < 4) {
            if (n > 64) {
        #pragma dp threshold(128)
              refine<<<4, 32>>>(a + blockIdx.x * n / 4, n / 4, depth + 1);
            } else {
              fill<<<1, 64>>>(a + blockIdx.x * n, n);
            }
          }
        }
    ",
    kind: RecursionPending { .. },
    code: "dpopt::recursion_pending",
    severity: Warning,
    line: 9,
    column: 1,
    span: "#pragma dp threshold(128)",
}

case! {
    name: aggregation_pending,
    input: "
        __global__ void refine(int *a, int n, int depth) {
          a[threadIdx.x] = __match_any_sync(0xffffffffu, n);
          if (threadIdx.x == 0 && depth < 4 && n > 64) {
        #pragma dp consldt(grid)
            refine<<<4, 32>>>(a + blockIdx.x * n / 4, n / 4, depth + 1);
          }
        }
    ",
    kind: AggregationPending { .. },
    code: "dpopt::aggregation_pending",
    severity: Warning,
    line: 4,
    column: 1,
    span: "#pragma dp consldt(grid)",
}

case! {
    name: shared_argument,
    input: "
        __global__ void child(const char *text, const char *pat, int *hit) {
          int i = threadIdx.x;
          if (text[i] != pat[i]) *hit = 0;
        }

        __global__ void parent(const char *text, int *hits) {
          __shared__ char pat[64];
          pat[threadIdx.x % 64] = text[threadIdx.x % 64];
          __syncthreads();
          char *p = pat;
        #pragma dp threshold(16)
          child<<<1, 32>>>(text + blockIdx.x, p + 1, hits + threadIdx.x);
        }
    ",
    kind: SharedArgument { .. },
    code: "dpopt::shared_argument",
    severity: Warning,
    line: 12,
    column: 39,
    span: "p + 1",
}

case! {
    name: std_name_clash,
    input: "
        struct complex { float re, im; };
        using namespace std;

        __global__ void child(complex *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i].re = i;
        }

        __global__ void parent(complex *a, int n) {
        #pragma dp consldt(grid)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: StdNameClash { .. },
    code: "dpopt::std_name_clash",
    severity: Warning,
    line: 1,
    column: 8,
    span: "complex",
}

case! {
    name: pragma_not_applied,
    input: "
        __global__ void child(int *a, int n);

        __global__ void parent(int *a, int n) {
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
        // --- child source ---
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void other(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: PragmaNotApplied { .. },
    code: "dpopt::pragma_not_applied",
    severity: Warning,
    line: 7,
    column: 1,
    span: "#pragma dp threshold(64)",
}

case! {
    name: not_a_kernel,
    input: "
        __device__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NotAKernel { .. },
    code: "dpopt::unknown_kernel",
    severity: Error,
    line: 8,
    column: 3,
    span: "child",
}

case! {
    name: malformed_launch_one_part,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<n>>>(a, n);
        }
    ",
    kind: MalformedLaunch { .. },
    code: "dpopt::malformed_launch",
    severity: Error,
    line: 8,
    column: 8,
    span: "<<<n>>>",
}

case! {
    name: malformed_launch_five_parts,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32, 0, 0, 1>>>(a, n);
        }
    ",
    kind: MalformedLaunch { .. },
    code: "dpopt::malformed_launch",
    severity: Error,
    line: 8,
    column: 8,
    span: "<<<(n + 31) / 32, 32, 0, 0, 1>>>",
}

case! {
    name: ambiguous_kernel,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void child(float *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = 0.5f * i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: AmbiguousKernel { count: 2, arity: 2, .. },
    code: "dpopt::ambiguous_kernel",
    severity: Error,
    line: 13,
    column: 3,
    span: "child",
}

case! {
    name: ambiguous_kernel_of_two_kinds,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __device__ void child(float *a, int n) {
          a[0] = 0.5f * n;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: AmbiguousKernel { count: 2, arity: 2, .. },
    code: "dpopt::ambiguous_kernel",
    severity: Error,
    line: 12,
    column: 3,
    span: "child",
}

case! {
    name: variadic_template,
    input: "
        template <typename... Args>
        __global__ void child(int *a, int n, Args... rest) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: VariadicTemplate { .. },
    code: "dpopt::variadic_template",
    severity: Error,
    line: 9,
    column: 3,
    span: "child",
}

case! {
    name: thread_count_fallback,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) >> 5, 32>>>(a, n);
        }
    ",
    kind: ThreadCountFallback { .. },
    code: "dpopt::thread_count",
    severity: Warning,
    line: 8,
    column: 11,
    span: "(n + 31) >> 5",
}

case! {
    name: threshold_decided,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(128)
          child<<<4, 256>>>(a, n);
        }
    ",
    kind: ThresholdDecided { threads: 1024, threshold: 128, .. },
    code: "dpopt::threshold_decided",
    severity: Warning,
    line: 8,
    column: 8,
    span: "<<<4, 256>>>",
}

case! {
    name: unseen_name,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, const int *n) {
          int m = n[threadIdx.x];
        #pragma dp threshold(64) coarsen(CHILD_FACTOR)
          child<<<(m + 255) / 256, 256>>>(a, m);
        }
    ",
    kind: UnseenName { .. },
    code: "dpopt::unseen_name",
    severity: Warning,
    line: 8,
    column: 34,
    span: "CHILD_FACTOR",
}

case! {
    name: value_not_constant,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, const int *n, int th) {
          int m = n[threadIdx.x];
        #pragma dp threshold(th) coarsen(2)
          child<<<(m + 255) / 256, 256>>>(a, m);
        }
    ",
    kind: ValueNotConstant { .. },
    code: "dpopt::value_not_constant",
    severity: Error,
    line: 8,
    column: 22,
    span: "th",
}

case! {
    name: name_not_visible,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, const int *n) {
          int m = n[threadIdx.x];
        #pragma dp threshold(64) child_threads(m + len)
          child<<<(m + 255) / 256, 256>>>(a, m);
          int len = 2;
          a[0] = len;
        }
    ",
    kind: NameNotVisible { .. },
    code: "dpopt::name_not_visible",
    severity: Error,
    line: 8,
    column: 44,
    span: "len",
}

case! {
    name: pragma_in_macro,
    input: "
        #define DP(x) _Pragma(#x)

        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
          DP(dp threshold(4))
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: PragmaInMacro { in_arguments: false, .. },
    code: "dpopt::pragma_in_macro",
    severity: Warning,
    line: 9,
    column: 3,
    span: "DP",
}

case! {
    name: pragma_in_macro_arguments,
    input: "
        #define STR(x) #x
        #define WRAP(x) STR(x)

        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
          WRAP(_Pragma(\"dp threshold(4)\"))
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: PragmaInMacro { in_arguments: true, .. },
    code: "dpopt::pragma_in_macro",
    severity: Warning,
    line: 10,
    column: 8,
    span: "_Pragma(\"dp threshold(4)\")",
}

// ---------------------------------------------------------- the child ----

case! {
    name: not_serializable,
    input: "
        __global__ void child(int *a, int n) {
          int v = __match_any_sync(0xffffffffu, n + threadIdx.x);
          a[threadIdx.x] = v;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NotSerializable { .. },
    code: "dpopt::not_serializable",
    severity: Error,
    line: 2,
    column: 11,
    span: "__match_any_sync",
}

case! {
    name: barrier_split,
    input: "
        __global__ void child(int *a, int n) {
          __shared__ int s[32];
          s[threadIdx.x] = n;
          if (threadIdx.x < 16) {
            __syncthreads();
          }
          a[threadIdx.x] = s[31 - threadIdx.x];
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: BarrierSplit { .. },
    code: "dpopt::barrier_split",
    severity: Error,
    line: 4,
    column: 7,
    span: "threadIdx",
}

case! {
    name: builtin_in_callee,
    input: "
        struct Pos { __device__ int lane() const { return threadIdx.x % 32; } };

        __global__ void child(int *a, int n) {
          a[Pos().lane()] = n;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: BuiltinInCallee { .. },
    code: "dpopt::builtin_in_callee",
    severity: Error,
    line: 4,
    column: 11,
    span: "lane",
}

case! {
    name: return_with_barrier,
    input: "
        __global__ void child(int *a, int n) {
          if (threadIdx.x >= n) return;
          __syncthreads();
          a[threadIdx.x] = n;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(2)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: ReturnWithBarrier { .. },
    code: "dpopt::return_with_barrier",
    severity: Error,
    line: 2,
    column: 25,
    span: "return",
}

case! {
    name: not_coarsenable,
    input: "
        #include <cooperative_groups.h>
        namespace cg = cooperative_groups;

        __global__ void child(int *a, int n) {
          cg::grid_group grid = cg::this_grid();
          a[grid.thread_rank()] = n;
          grid.sync();
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(2)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: NotCoarsenable { .. },
    code: "dpopt::not_coarsenable",
    severity: Error,
    line: 5,
    column: 25,
    span: "cg::this_grid()",
}

case! {
    name: fixed_configuration_hazard,
    input: "
        __global__ void child(int *a, int n) {
          __shared__ int s[32];
          s[threadIdx.x] = n;
          __syncthreads();
          a[threadIdx.x] = s[31 - threadIdx.x];
        }

        __global__ void parent(int *a, int n) {
        #pragma dp consldt(warp) blocks(64)
          child<<<1, 32>>>(a, n);
        }
    ",
    kind: FixedConfigurationHazard { .. },
    code: "dpopt::fixed_configuration",
    severity: Error,
    line: 4,
    column: 3,
    span: "__syncthreads",
}

case! {
    name: block_aggregation_hazard,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
          if (threadIdx.x < n) {
        #pragma dp consldt(block)
            child<<<(n + 31) / 32, 32>>>(a, n);
          }
          __syncthreads();
        }
    ",
    kind: BlockAggregationHazard { .. },
    code: "dpopt::block_aggregation",
    severity: Error,
    line: 11,
    column: 3,
    span: "__syncthreads",
}

case! {
    name: cannot_see_declared_function,
    input: "
        __device__ void helper(int *a, int i);

        __global__ void child(int *a, int n) {
          if (threadIdx.x >= n) return;
          helper(a, threadIdx.x);
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(2)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: CannotSee { why: Unseen::Declared, .. },
    code: "dpopt::cannot_see",
    severity: Error,
    line: 5,
    column: 3,
    span: "helper",
}

case! {
    name: cannot_see_through_a_function_pointer,
    input: "
        typedef float (*unary_op)(float);

        __global__ void apply(float *a, int n, unary_op op) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = op(a[i]);
        }

        __global__ void parent(float *a, int n, unary_op op) {
        #pragma dp threshold(64)
          apply<<<(n + 127) / 128, 128>>>(a, n, op);
        }
    ",
    kind: CannotSee { why: Unseen::Pointer, .. },
    code: "dpopt::cannot_see",
    severity: Error,
    line: 5,
    column: 21,
    span: "op",
}

case! {
    name: cannot_see_assembly,
    input: "
        #define WAIT \"bar.sync 0;\"

        __global__ void child(int *a, int n) {
          if (threadIdx.x >= n) return;
          asm volatile(WAIT);
          a[threadIdx.x] = n;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp coarsen(2)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: CannotSee { why: Unseen::Asm, .. },
    code: "dpopt::cannot_see",
    severity: Error,
    line: 5,
    column: 3,
    span: "asm volatile(WAIT)",
}

// ------------------------------------------------------- lexical forms ----

case! {
    name: unbalanced_brackets,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
        }
    ",
    kind: UnbalancedBrackets,
    code: "dpopt::unbalanced",
    severity: Error,
    line: 10,
    column: 1,
    span: "}",
}

case! {
    name: unterminated_comment,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
          /* the end of the parent
        }
    ",
    kind: Unterminated { what: "comment" },
    code: "dpopt::unterminated",
    severity: Error,
    line: 9,
    column: 3,
    span: "/*",
}

case! {
    name: unterminated_raw_string,
    input: r#"
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
          const char *name = R"(parent;
        }
    "#,
    kind: Unterminated { what: "raw string literal" },
    code: "dpopt::unterminated",
    severity: Error,
    line: 9,
    column: 22,
    span: r#"R""#,
}

case! {
    name: unterminated_string,
    input: r#"
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
          if (n < 0) printf("abc);
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    "#,
    kind: Unterminated { what: "string literal" },
    code: "dpopt::unterminated",
    severity: Error,
    line: 7,
    column: 21,
    span: "\"",
}

case! {
    name: unreadable_digraph,
    input: "
        __global__ void child(int *a, int n) <%
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        %>

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: UnreadableToken { .. },
    code: "dpopt::unreadable_token",
    severity: Error,
    line: 1,
    column: 38,
    span: "<%",
}

case! {
    name: unreadable_line_splice,
    input: r#"
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64)
          chi\
        ld<<<(n + 31) / 32, 32>>>(a, n);
        }
    "#,
    kind: UnreadableToken { .. },
    code: "dpopt::unreadable_token",
    severity: Error,
    line: 8,
    column: 3,
    span: "chi\\\nld",
}

// ------------------------------------------------------------ postwork ----

case! {
    name: cdp1_sync_without_migrate_sync,
    input: "
        __global__ void child(int *a) { a[threadIdx.x] = 1; }

        __global__ void parent(int *a, int *sum) {
          child<<<1, 32>>>(a);
          cudaDeviceSynchronize();
          atomicAdd(sum, a[threadIdx.x]);
        }
    ",
    kind: SyncMigratable { .. },
    code: "dpopt::cdp1_sync",
    severity: Warning,
    line: 5,
    column: 3,
    span: "cudaDeviceSynchronize",
}

case! {
    name: postwork_sync_in_a_loop,
    input: "
        // dpopt: --migrate-sync
        __global__ void child(int *a, int r) { a[threadIdx.x] += r; }

        __global__ void parent(int *a) {
          for (int r = 0; r < 4; ++r) {
            child<<<1, 32>>>(a, r);
            cudaDeviceSynchronize();
          }
        }
    ",
    kind: SyncNested { .. },
    code: "dpopt::postwork_nested",
    severity: Error,
    line: 7,
    column: 5,
    span: "cudaDeviceSynchronize",
}

case! {
    name: postwork_sync_in_a_device_function,
    input: "
        // dpopt: --migrate-sync
        __global__ void child(int *a) { a[threadIdx.x] = 1; }

        __device__ void launch_and_wait(int *a) {
          child<<<1, 32>>>(a);
          cudaThreadSynchronize();
        }
    ",
    kind: SyncNotInKernel { .. },
    code: "dpopt::postwork_context",
    severity: Error,
    line: 6,
    column: 3,
    span: "cudaThreadSynchronize",
}

case! {
    name: postwork_wait_in_a_helper_of_the_launching_kernel,
    input: "
        // dpopt: --migrate-sync
        __global__ void child(int *a) { a[threadIdx.x] += 1; }

        __device__ void block_wait(void) {
          __syncthreads();
          if (threadIdx.x == 0) cudaDeviceSynchronize();
        }

        __global__ void parent(int *a) {
          if (threadIdx.x == 0) child<<<1, 32>>>(a + blockIdx.x * 32);
          block_wait();
          a[blockIdx.x * 32 + threadIdx.x] *= 2;
        }
    ",
    kind: SyncNotInKernel { .. },
    code: "dpopt::postwork_context",
    severity: Error,
    line: 6,
    column: 25,
    span: "cudaDeviceSynchronize",
}

case! {
    name: postwork_second_sync,
    input: "
        // dpopt: --migrate-sync
        __global__ void child(int *a) { a[threadIdx.x] += 1; }

        __global__ void parent(int *a) {
          child<<<1, 32>>>(a);
          cudaDeviceSynchronize();
          child<<<1, 32>>>(a);
          cudaDeviceSynchronize();
          a[0] = 0;
        }
    ",
    kind: SyncTwice { .. },
    code: "dpopt::postwork_twice",
    severity: Error,
    line: 8,
    column: 3,
    span: "cudaDeviceSynchronize",
}

case! {
    name: postwork_uses_shared_memory,
    input: "
        // dpopt: --migrate-sync
        __global__ void child(int *a) { a[threadIdx.x] = 1; }

        __global__ void parent(int *a) {
          __shared__ int tile[32];
          tile[threadIdx.x] = a[threadIdx.x];
          child<<<1, 32>>>(a);
          cudaDeviceSynchronize();
          a[threadIdx.x] += tile[threadIdx.x];
        }
    ",
    kind: PostworkShared { .. },
    code: "dpopt::postwork_shared",
    severity: Error,
    line: 9,
    column: 21,
    span: "tile",
}

case! {
    name: postwork_waits_at_a_barrier,
    input: "
        // dpopt: --migrate-sync
        __global__ void child(int *a) { a[threadIdx.x] = 1; }

        __global__ void parent(int *a) {
          child<<<1, 32>>>(a);
          cudaDeviceSynchronize();
          a[threadIdx.x] += 1;
          __syncthreads();
          a[threadIdx.x] += a[(threadIdx.x + 1) % 32];
        }
    ",
    kind: PostworkBarrier { .. },
    code: "dpopt::postwork_barrier",
    severity: Error,
    line: 8,
    column: 3,
    span: "__syncthreads",
}

case! {
    name: postwork_reference_local,
    input: "
        // dpopt: --migrate-sync
        __global__ void child(int *a) { a[threadIdx.x] = 1; }

        __global__ void parent(int *a) {
          int &mine = a[threadIdx.x];
          child<<<1, 32>>>(a);
          cudaDeviceSynchronize();
          mine += 1;
        }
    ",
    kind: PostworkUnsupported { .. },
    code: "dpopt::postwork_unsupported",
    severity: Error,
    line: 8,
    column: 3,
    span: "mine",
}

// -------------------------------------------------------------- floor ----

case! {
    name: floor_refused,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64) floor
          child<<<(n + 31) / 32, 32>>>(a, n);
          child<<<1, 32>>>(a, n);
        }

        void run(int *a, int n) { parent<<<1, 32>>>(a, n); }
    ",
    kind: FloorRefused { .. },
    code: "dpopt::floor",
    severity: Error,
    line: 9,
    column: 3,
    span: "child<<<1, 32>>>(a, n);",
}

case! {
    name: floor_with_consldt,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp floor consldt(grid)
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: FloorWithAggregation,
    code: "dpopt::floor_with_consldt",
    severity: Error,
    line: 7,
    column: 12,
    span: "floor",
}

case! {
    name: floor_unused,
    input: "
        __global__ void child(int *a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) a[i] = i;
        }

        __global__ void parent(int *a, int n) {
        #pragma dp threshold(64) floor
          child<<<(n + 31) / 32, 32>>>(a, n);
        }
    ",
    kind: FloorUnused { .. },
    code: "dpopt::floor_unused",
    severity: Warning,
    line: 7,
    column: 1,
    span: "#pragma dp threshold(64) floor",
}

// ---------------------------------------------------------- allocation ----

case! {
    name: alloc_choice_unknown,
    input: "
        __global__ void child(float *a, int n) { a[threadIdx.x] = n; }

        __global__ void parent(int n) {
          float *a = (float *)malloc(n * sizeof(float));
        #pragma dp alloc(wrap)
          child<<<1, 32>>>(a, n);
        }
    ",
    kind: BadAllocChoice { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 5,
    column: 18,
    span: "wrap",
}

case! {
    name: alloc_without_an_allocation,
    input: "
        __global__ void child(float *a, int n) { a[threadIdx.x] = n; }

        __global__ void parent(float *a, int n) {
        #pragma dp alloc(warp)
          child<<<1, 32>>>(a, n);
        }
    ",
    kind: AllocNotFound { .. },
    code: "dpopt::alloc_not_found",
    severity: Error,
    line: 4,
    column: 12,
    span: "alloc(warp)",
}

case! {
    name: alloc_pointer_stored,
    input: "
        __global__ void child(float *a, int n) { a[threadIdx.x] = n; }

        __global__ void parent(float **keep, int n) {
          float *a = (float *)malloc(n * sizeof(float));
          keep[threadIdx.x] = a;
        #pragma dp alloc(warp)
          child<<<1, 32>>>(a, n);
        }
    ",
    kind: AllocEscape { .. },
    code: "dpopt::alloc_escape",
    severity: Error,
    line: 5,
    column: 23,
    span: "a",
}

case! {
    name: alloc_freed_by_a_child_launched_elsewhere,
    input: "
        __global__ void child(float *a, int n) {
          a[threadIdx.x] = n;
          if (threadIdx.x == 0) free(a);
        }

        __global__ void parent(int n) {
          float *a = (float *)malloc(n * sizeof(float));
        #pragma dp alloc(block)
          child<<<1, 32>>>(a, n);
        }

        void host(float *a) { child<<<1, 32>>>(a, 4); }
    ",
    kind: AllocFreeShared { .. },
    code: "dpopt::alloc_free",
    severity: Error,
    line: 3,
    column: 25,
    span: "free",
}

case! {
    name: alloc_of_a_parameter,
    input: "
        __global__ void child(float *a, int n) { a[threadIdx.x] = n; }

        __global__ void parent(float *a, int n) {
          cudaMalloc((void **)&a, n * sizeof(float));
        #pragma dp alloc(warp)
          child<<<1, 32>>>(a, n);
        }
    ",
    kind: AllocUnsupported { .. },
    code: "dpopt::alloc_unsupported",
    severity: Error,
    line: 4,
    column: 3,
    span: "cudaMalloc",
}

case! {
    name: alloc_block_with_a_barrier,
    input: "
        __global__ void child(float *a, int n) { a[threadIdx.x] = n; }

        __global__ void parent(int n) {
          float *a = (float *)malloc(n * sizeof(float));
          __syncthreads();
        #pragma dp alloc(block)
          child<<<1, 32>>>(a, n);
        }
    ",
    kind: AllocBlockHazard { .. },
    code: "dpopt::alloc_block",
    severity: Error,
    line: 5,
    column: 3,
    span: "__syncthreads",
}

case! {
    name: alloc_left_per_thread_under_consldt,
    input: "
        __device__ void keep(float *p);
        __global__ void child(float *a, int n) { a[threadIdx.x] = n; }

        __global__ void parent(int n) {
          float *a = (float *)malloc(n * sizeof(float));
          keep(a);
        #pragma dp consldt(warp)
          child<<<1, 32>>>(a, n);
        }
    ",
    kind: AllocNotAggregated { .. },
    code: "dpopt::alloc_not_aggregated",
    severity: Warning,
    line: 6,
    column: 8,
    span: "a",
}

// ---------------------------------------------------------- promotion ----

case! {
    name: bad_promotion,
    input: "
        __global__ void chain(int *a, int n) {
          if (n > 1) {
        #pragma dp promote(agregate)
            chain<<<1, 32>>>(a, n - 1);
          }
        }
    ",
    kind: BadPromotion { .. },
    code: "dpopt::clause_value",
    severity: Error,
    line: 3,
    column: 20,
    span: "agregate",
}

case! {
    name: promote_with_another_clause,
    input: "
        __global__ void chain(int *a, int n) {
          if (n > 1) {
        #pragma dp promote(basic) threshold(64)
            chain<<<1, 32>>>(a, n - 1);
          }
        }
    ",
    kind: ClauseConflict { .. },
    code: "dpopt::clause_conflict",
    severity: Error,
    line: 3,
    column: 27,
    span: "threshold(64)",
}

case! {
    name: promote_not_recursive,
    input: "
        __global__ void child(int *a) { a[threadIdx.x] = 1; }

        __global__ void parent(int *a) {
        #pragma dp promote(basic)
          child<<<1, 32>>>(a);
        }
    ",
    kind: PromoteNotRecursive { .. },
    code: "dpopt::promote_not_recursive",
    severity: Error,
    line: 5,
    column: 3,
    span: "child",
}

case! {
    name: promote_more_than_one_block,
    input: "
        __global__ void chain(int *a, int n) {
          if (n > 1) {
        #pragma dp promote(basic)
            chain<<<2, 32>>>(a, n - 1);
          }
        }
    ",
    kind: PromoteGrid { .. },
    code: "dpopt::promote_grid",
    severity: Error,
    line: 4,
    column: 13,
    span: "2",
}

case! {
    name: promote_block_size_computed,
    input: "
        __global__ void chain(int *a, int n) {
          int threads = a[0];
          if (n > 1) {
        #pragma dp promote(basic)
            chain<<<1, threads>>>(a, n - 1);
          }
        }
    ",
    kind: PromoteConfig { .. },
    code: "dpopt::promote_config",
    severity: Error,
    line: 5,
    column: 16,
    span: "threads",
}

case! {
    name: promote_in_a_loop,
    input: "
        __global__ void chain(int *a, int n) {
          for (int k = 0; k < 2; ++k) {
        #pragma dp promote(basic)
            chain<<<1, 32>>>(a, n - 1);
          }
        }
    ",
    kind: PromotePlacement { .. },
    code: "dpopt::promote_placement",
    severity: Error,
    line: 4,
    column: 5,
    span: "chain<<<1, 32>>>(a, n - 1);",
}

case! {
    name: promote_with_a_stream,
    input: "
        __global__ void chain(int *a, int n, cudaStream_t s) {
          if (n > 1) {
        #pragma dp promote(basic)
            chain<<<1, 32, 0, s>>>(a, n - 1, s);
          }
        }
    ",
    kind: PromoteUnsupported { .. },
    code: "dpopt::promote_unsupported",
    severity: Error,
    line: 4,
    column: 23,
    span: "s",
}

case! {
    name: acquire_outside_a_promoted_kernel,
    input: "
        __global__ void chain(int *a, int n) {
        #pragma dp acquire
          a[0] = n;
        }
    ",
    kind: AcquirePlacement { .. },
    code: "dpopt::acquire_placement",
    severity: Error,
    line: 2,
    column: 1,
    span: "#pragma dp acquire",
}

case! {
    name: acquire_after_a_postponed_use,
    input: "
        __global__ void chain(int *a, int n, int offset) {
          int x = a[n] + offset;
        #pragma dp acquire
          if (n > 1) {
        #pragma dp promote(aggregate)
            chain<<<1, 32>>>(a, n - 1, offset + x);
          }
        }
    ",
    kind: AcquirePostponed { .. },
    code: "dpopt::acquire_postponed",
    severity: Error,
    line: 2,
    column: 18,
    span: "offset",
}

// ------------------------------------------------------------ coverage ----

/// The code under which each kind is tested. Exhaustive, no wildcard: a
/// new variant does not compile until it gets an arm here, and
/// `every_kind_is_covered` then asks for a `case!` with it.
fn tested_as(kind: &DiagnosticKind) -> &'static str {
    use DiagnosticKind::*;
    match kind {
        UnknownClause { .. } => "dpopt::unknown_clause",
        MissingArguments { .. } => "dpopt::clause_arguments",
        UnclosedArguments { .. } => "dpopt::clause_arguments",
        WrongArgumentCount { .. } => "dpopt::clause_arguments",
        NotPositive { .. } => "dpopt::clause_value",
        NotAnInteger { .. } => "dpopt::clause_value",
        TooLarge { .. } => "dpopt::clause_value",
        AboveLimit { .. } => "dpopt::clause_value",
        // Each clause that belongs to the kernel has its own code; the one
        // there is: `parent_threads`.
        KernelClauseDiffers { .. } => "dpopt::parent_threads_differ",
        DuplicateClause { .. } => "dpopt::duplicate_clause",
        BadGranularity { .. } => "dpopt::clause_value",
        BadBufferKind { .. } => "dpopt::clause_value",
        BadWorkVariable { .. } => "dpopt::clause_value",
        BadPromotion { .. } => "dpopt::clause_value",
        ClauseConflict { .. } => "dpopt::clause_conflict",
        NeedsAggregation { .. } => "dpopt::needs_consldt",
        NeedsThreshold { .. } => "dpopt::needs_threshold",
        NotImplementedYet { .. } => "dpopt::not_implemented",
        MalformedPragma => "dpopt::malformed_pragma",
        DuplicatePragma => "dpopt::duplicate_pragma",
        NoLaunchAfterPragma { .. } => "dpopt::no_launch",
        HostSideLaunch { .. } => "dpopt::host_launch",
        LaunchOutsideFunction => "dpopt::launch_context",
        KernelNotDefined { .. } => "dpopt::unknown_kernel",
        NotAKernel { .. } => "dpopt::unknown_kernel",
        ChildHelperHidden { .. } => "dpopt::child_helper",
        PragmaNotApplied { .. } => "dpopt::pragma_not_applied",
        StdNameClash { .. } => "dpopt::std_name_clash",
        CoarsenPending { .. } => "dpopt::coarsen_pending",
        RecursionPending { .. } => "dpopt::recursion_pending",
        AggregationPending { .. } => "dpopt::aggregation_pending",
        SharedArgument { .. } => "dpopt::shared_argument",
        MalformedLaunch { .. } => "dpopt::malformed_launch",
        NotSerializable { .. } => "dpopt::not_serializable",
        BarrierSplit { .. } => "dpopt::barrier_split",
        BuiltinInCallee { .. } => "dpopt::builtin_in_callee",
        ReturnWithBarrier { .. } => "dpopt::return_with_barrier",
        VariadicTemplate { .. } => "dpopt::variadic_template",
        UnbalancedBrackets => "dpopt::unbalanced",
        ThreadCountFallback { .. } => "dpopt::thread_count",
        BlockAggregationHazard { .. } => "dpopt::block_aggregation",
        FixedConfigurationHazard { .. } => "dpopt::fixed_configuration",
        ThresholdDecided { .. } => "dpopt::threshold_decided",
        UnseenName { .. } => "dpopt::unseen_name",
        ValueNotConstant { .. } => "dpopt::value_not_constant",
        NameNotVisible { .. } => "dpopt::name_not_visible",
        AmbiguousKernel { .. } => "dpopt::ambiguous_kernel",
        TooDeep { .. } => "dpopt::too_deep",
        Unterminated { .. } => "dpopt::unterminated",
        UnreadableToken { .. } => "dpopt::unreadable_token",
        PragmaInMacro { .. } => "dpopt::pragma_in_macro",
        NotCoarsenable { .. } => "dpopt::not_coarsenable",
        CannotSee {
            why: Unseen::Declared,
            ..
        } => "dpopt::cannot_see",
        CannotSee {
            why: Unseen::Pointer,
            ..
        } => "dpopt::cannot_see",
        CannotSee {
            why: Unseen::Asm, ..
        } => "dpopt::cannot_see",
        SyncMigratable { .. } => "dpopt::cdp1_sync",
        SyncNested { .. } => "dpopt::postwork_nested",
        SyncNotInKernel { .. } => "dpopt::postwork_context",
        SyncTwice { .. } => "dpopt::postwork_twice",
        PostworkShared { .. } => "dpopt::postwork_shared",
        PostworkBarrier { .. } => "dpopt::postwork_barrier",
        PostworkUnsupported { .. } => "dpopt::postwork_unsupported",
        FloorRefused { .. } => "dpopt::floor",
        FloorWithAggregation => "dpopt::floor_with_consldt",
        FloorUnused { .. } => "dpopt::floor_unused",
        BadAllocChoice { .. } => "dpopt::clause_value",
        AllocNotFound { .. } => "dpopt::alloc_not_found",
        AllocEscape { .. } => "dpopt::alloc_escape",
        AllocFreeShared { .. } => "dpopt::alloc_free",
        AllocUnsupported { .. } => "dpopt::alloc_unsupported",
        AllocBlockHazard { .. } => "dpopt::alloc_block",
        AllocNotAggregated { .. } => "dpopt::alloc_not_aggregated",
        PromoteNotRecursive { .. } => "dpopt::promote_not_recursive",
        PromoteGrid { .. } => "dpopt::promote_grid",
        PromoteConfig { .. } => "dpopt::promote_config",
        PromotePlacement { .. } => "dpopt::promote_placement",
        PromoteUnsupported { .. } => "dpopt::promote_unsupported",
        AcquirePlacement { .. } => "dpopt::acquire_placement",
        AcquirePostponed { .. } => "dpopt::acquire_postponed",
    }
}

/// One value of every arm of `tested_as`, to check that the code each arm
/// names is the code the kind reports.
fn one_of_each() -> Vec<DiagnosticKind> {
    use DiagnosticKind::*;
    let s = String::new;
    vec![
        UnknownClause {
            name: s(),
            suggestion: None,
        },
        MissingArguments {
            clause: s(),
            expected: "",
        },
        UnclosedArguments { clause: s() },
        WrongArgumentCount {
            clause: s(),
            expected: "",
            found: 0,
        },
        NotPositive {
            clause: s(),
            value: s(),
        },
        NotAnInteger {
            clause: s(),
            value: s(),
        },
        TooLarge {
            clause: s(),
            value: s(),
        },
        AboveLimit {
            clause: s(),
            value: s(),
            limit: 1,
        },
        KernelClauseDiffers {
            clause: ClauseName::ParentThreads,
            kernel: s(),
            first: s(),
            second: s(),
        },
        DuplicateClause { clause: s() },
        BadGranularity {
            value: s(),
            suggestion: None,
        },
        BadBufferKind { value: s() },
        BadWorkVariable { value: s() },
        BadPromotion {
            value: s(),
            suggestion: None,
        },
        ClauseConflict {
            clause: s(),
            other: s(),
        },
        NeedsAggregation { clause: s() },
        NeedsThreshold { clause: s() },
        NotImplementedYet { clause: s() },
        MalformedPragma,
        DuplicatePragma,
        NoLaunchAfterPragma { found: s() },
        HostSideLaunch { function: s() },
        LaunchOutsideFunction,
        KernelNotDefined {
            kernel: s(),
            searched: Vec::new(),
        },
        NotAKernel { kernel: s() },
        PragmaNotApplied { file: s() },
        StdNameClash { name: s() },
        CoarsenPending { kernel: s() },
        RecursionPending {
            kernel: s(),
            launched: s(),
        },
        AggregationPending { kernel: s() },
        SharedArgument {
            kernel: s(),
            argument: s(),
        },
        ChildHelperHidden {
            kernel: s(),
            helper: s(),
            file: s(),
            why: s(),
            declarable: false,
        },
        MalformedLaunch { reason: s() },
        NotSerializable {
            kernel: s(),
            construct: s(),
        },
        BarrierSplit {
            clause: s(),
            kernel: s(),
            why: s(),
            fix: s(),
        },
        BuiltinInCallee {
            kernel: s(),
            callee: s(),
            builtin: s(),
            clause: s(),
            reader: s(),
            uncopied: None,
        },
        ReturnWithBarrier { kernel: s() },
        VariadicTemplate { kernel: s() },
        UnbalancedBrackets,
        ThreadCountFallback { kernel: s() },
        BlockAggregationHazard {
            granularity: s(),
            function: s(),
            construct: s(),
        },
        FixedConfigurationHazard {
            clause: s(),
            kernel: s(),
            construct: s(),
        },
        ThresholdDecided {
            kernel: s(),
            threads: 0,
            threshold: 0,
            site: s(),
        },
        UnseenName {
            name: s(),
            clause: s(),
        },
        ValueNotConstant {
            name: s(),
            clause: s(),
        },
        NameNotVisible {
            name: s(),
            parent: s(),
        },
        AmbiguousKernel {
            kernel: s(),
            count: 0,
            arity: 0,
        },
        TooDeep { limit: 0 },
        Unterminated { what: "" },
        UnreadableToken {
            token: s(),
            why: "",
            fix: s(),
        },
        PragmaInMacro {
            name: s(),
            in_arguments: false,
        },
        NotCoarsenable {
            kernel: s(),
            construct: s(),
        },
        CannotSee {
            clause: s(),
            function: s(),
            what: s(),
            why: Unseen::Declared,
        },
        CannotSee {
            clause: s(),
            function: s(),
            what: s(),
            why: Unseen::Pointer,
        },
        CannotSee {
            clause: s(),
            function: s(),
            what: s(),
            why: Unseen::Asm,
        },
        SyncMigratable {
            kernel: s(),
            call: s(),
        },
        SyncNested {
            kernel: s(),
            call: s(),
            construct: s(),
        },
        SyncNotInKernel {
            function: s(),
            call: s(),
        },
        SyncTwice {
            kernel: s(),
            call: s(),
        },
        PostworkShared {
            kernel: s(),
            name: s(),
        },
        PostworkBarrier {
            kernel: s(),
            construct: s(),
        },
        PostworkUnsupported {
            kernel: s(),
            what: s(),
        },
        FloorRefused {
            kernel: s(),
            why: s(),
            fix: s(),
        },
        FloorWithAggregation,
        FloorUnused { kernel: s() },
        BadAllocChoice {
            value: s(),
            suggestion: None,
        },
        AllocNotFound { parent: s() },
        AllocEscape {
            pointer: s(),
            function: s(),
            what: s(),
        },
        AllocFreeShared {
            pointer: s(),
            child: s(),
        },
        AllocUnsupported {
            pointer: s(),
            what: s(),
        },
        AllocBlockHazard {
            function: s(),
            construct: s(),
        },
        AllocNotAggregated {
            refused: Box::new(AllocNotFound { parent: s() }),
        },
        PromoteNotRecursive {
            kernel: s(),
            parent: s(),
        },
        PromoteGrid { kernel: s() },
        PromoteConfig {
            kernel: s(),
            what: "",
            name: s(),
        },
        PromotePlacement {
            kernel: s(),
            construct: s(),
        },
        PromoteUnsupported {
            kernel: s(),
            what: s(),
        },
        AcquirePlacement { reason: s() },
        AcquirePostponed {
            kernel: s(),
            name: s(),
        },
    ]
}

/// The `case!` invocations of this file: (kind pattern, code), read from its
/// text.
fn cases(text: &str) -> Vec<(String, String)> {
    let field = |chunk: &str, name: &str| -> String {
        let at = chunk
            .find(&format!("\n    {name}: "))
            .unwrap_or_else(|| panic!("a case without `{name}:`: {chunk}"));
        let rest = &chunk[at + name.len() + 7..];
        rest[..rest.find(",\n    ").expect("field ends")].to_string()
    };
    text.split("\ncase! {")
        .skip(1)
        .map(|chunk| {
            let chunk = &chunk[..chunk.find("\n}\n").expect("case ends")];
            (
                field(chunk, "kind"),
                field(chunk, "code").trim_matches('"').to_string(),
            )
        })
        .collect()
}

/// The arms of `tested_as`: (pattern with blanks collapsed, code), read
/// from this file's text.
fn arms(text: &str) -> Vec<(String, String)> {
    let start = text.find("fn tested_as(").expect("tested_as in this file");
    let body = &text[start..];
    let body = &body[body.find("match kind {").expect("match") + 12..];
    let body = &body[..body.find("\n    }\n").expect("end of match")];
    let body: Vec<&str> = body
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect();
    body.join("\n")
        .split("\",")
        .filter(|arm| !arm.trim().is_empty())
        .map(|arm| {
            let (pattern, code) = arm.split_once(" => \"").expect("`PATTERN => \"CODE\",`");
            let pattern = pattern.split_whitespace().collect::<Vec<_>>().join(" ");
            (pattern, code.to_string())
        })
        .collect()
}

#[test]
fn every_kind_is_covered() {
    let text = include_str!("error_kinds.rs");
    let arms = arms(text);
    let kinds = one_of_each();
    assert_eq!(
        arms.len(),
        kinds.len(),
        "one_of_each() must hold one value per arm of tested_as()"
    );
    for kind in &kinds {
        assert_eq!(
            tested_as(kind),
            kind.code(),
            "tested_as() names the wrong code for {kind:?}"
        );
    }
    let cases = cases(text);
    for (pattern, code) in &arms {
        // An arm such as `CannotSee { why: Unseen::Asm, .. }` is covered by
        // a case whose pattern names the same variant and the same `why`.
        let variant = pattern.split([' ', '{']).next().unwrap();
        let why = pattern
            .split_once("why: ")
            .map(|(_, w)| w.split([',', ' ']).next().unwrap());
        let same_why = |text: &str, unseen: &str| match why {
            None => true,
            Some(w) => text.contains(&format!("why: {}", w.replace("Unseen::", unseen))),
        };
        let valued = kinds.iter().any(|kind| {
            let debug = format!("{kind:?}");
            debug.split([' ', '{']).next() == Some(variant) && same_why(&debug, "")
        });
        assert!(valued, "no value of `{pattern}` in one_of_each()");
        let covered = cases.iter().any(|(kind, case_code)| {
            case_code == code
                && kind.split([' ', '{']).next() == Some(variant)
                && same_why(kind, "Unseen::")
        });
        assert!(
            covered,
            "no `case!` with `kind: {pattern}` and `code: \"{code}\"` in tests/error_kinds.rs"
        );
    }
}
