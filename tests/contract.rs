//! dpopt's contract on input written the ways real code writes it: every
//! `#pragma dp` the preprocessor sees is applied or refused with a pointed
//! error, a file without one passes through byte for byte, every diagnostic
//! renders, and transforming dpopt's own output changes nothing. One
//! minimized fixture per case, in tests/contract/.

mod common;

use dpopt::source::SourceFile;
use miette::{GraphicalReportHandler, GraphicalTheme};
use std::process::Command;

fn load(name: &str) -> SourceFile {
    let path = common::root().join("tests/contract").join(name);
    SourceFile::new(
        format!("tests/contract/{name}"),
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
}

/// Render every diagnostic (a panic here fails the test).
fn render_all(file: &SourceFile, outcome: &dpopt::Outcome) -> String {
    let handler =
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(100);
    let mut out = String::new();
    for d in &outcome.diagnostics {
        handler
            .render_report(&mut out, d.to_report(file).as_ref())
            .unwrap();
    }
    out
}

/// The file transforms with `sites` sites, each pragma becomes a marker
/// comment, the output holds no pragma any more, and transforming the
/// output again is a byte-identical pass-through.
fn applied(name: &str, sites: usize) -> Vec<u8> {
    let file = load(name);
    let outcome = dpopt::run(&file, "out.cu", true);
    let rendered = render_all(&file, &outcome);
    let output = outcome
        .output
        .unwrap_or_else(|| panic!("{name}: refused:\n{rendered}"));
    assert_eq!(outcome.sites.len(), sites, "{name}: sites\n{rendered}");
    let text = String::from_utf8_lossy(&output).into_owned();
    assert_eq!(
        text.matches("/* dpopt: #pragma dp ").count(),
        sites,
        "{name}: one marker comment per site"
    );
    // The markers are well-formed comments: no `*/` inside them.
    for marker in text.split("/* dpopt: #pragma dp ").skip(1) {
        let line = marker.lines().next().unwrap();
        assert_eq!(line.matches("*/").count(), 1, "{name}: marker `{line}`");
    }
    let again = SourceFile::new("out.cu", output.clone());
    let second = dpopt::run(&again, "out2.cu", true);
    assert!(second.sites.is_empty(), "{name}: transformed twice");
    assert_eq!(
        second.output.as_deref(),
        Some(&output[..]),
        "{name}: the output is not a fixed point"
    );
    output
}

/// The file is refused with `code` at `line:col`, the primary span's text
/// starting with `span`, and nothing is written.
fn refused(name: &str, code: &str, line: usize, col: usize, span: &str) {
    let file = load(name);
    let outcome = dpopt::run(&file, "out.cu", true);
    let rendered = render_all(&file, &outcome);
    assert!(outcome.output.is_none(), "{name}: output despite errors");
    let d = outcome
        .diagnostics
        .iter()
        .find(|d| d.kind.code() == code)
        .unwrap_or_else(|| panic!("{name}: no {code} in\n{rendered}"));
    assert_eq!(
        file.line_col(d.span.start()),
        (line, col),
        "{name}\n{rendered}"
    );
    assert!(
        file.view[d.span.range()].starts_with(span),
        "{name}: span `{}`",
        &file.view[d.span.range()]
    );
    assert!(rendered.contains(&format!("{}:{line}:{col}", file.name)));
}

/// The output compiles with nvcc for sm_90 (when nvcc is installed; the
/// README's test command installs it).
fn compiles_when_nvcc_is_here(output: &[u8]) {
    let Some(nvcc) = common::nvcc_or_skip("compiles_when_nvcc_is_here") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("out.cu");
    std::fs::write(&source, output).unwrap();
    let result = Command::new(nvcc)
        .args(["-rdc=true", "-arch=sm_90", "-c", "-o"])
        .arg(dir.path().join("out.o"))
        .arg(&source)
        .output()
        .expect("runs nvcc");
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
}

#[test]
fn a_comment_before_the_hash_is_blank() {
    applied("comment_before_hash.cu", 1);
}

#[test]
fn the_digraph_of_the_hash() {
    applied("digraph_hash.cu", 1);
}

#[test]
fn line_splices_after_the_hash_and_inside_words() {
    applied("splice_after_hash.cu", 1);
    applied("splice_in_words.cu", 1);
}

#[test]
fn comments_between_the_tokens_of_a_pragma() {
    let out = applied("comments_between_tokens.cu", 1);
    assert!(String::from_utf8_lossy(&out).contains("/* dpopt: #pragma dp threshold( 64 ) --"));
}

#[test]
fn the_pragma_operator() {
    applied("pragma_operator.cu", 1);
    applied("pragma_operator_same_line.cu", 1);
}

#[test]
fn a_macro_that_expands_to_pragma_is_pointed_at() {
    let file = load("pragma_through_macro.cu");
    let outcome = dpopt::run(&file, "out.cu", true);
    assert_eq!(outcome.output.as_deref(), Some(&file.bytes[..]));
    let d = &outcome.diagnostics[0];
    assert_eq!(d.kind.code(), "dpopt::pragma_in_macro");
    assert!(!d.is_error());
    assert_eq!(file.line_col(d.span.start()), (8, 3));
    assert_eq!(&file.view[d.span.range()], "DP_PRAGMA");
}

#[test]
fn raw_strings_with_encoding_prefixes_pass_through() {
    let file = load("raw_string_prefixes.cu");
    let outcome = dpopt::run(&file, "out.cu", true);
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
    assert_eq!(outcome.output.as_deref(), Some(&file.bytes[..]));
}

#[test]
fn a_comment_inside_a_pragma_does_not_close_the_marker() {
    let out = applied("comment_closes_marker.cu", 1);
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("/* dpopt: #pragma dp threshold( 64) coarsen(2) -- site"));
    compiles_when_nvcc_is_here(&out);
}

#[test]
fn an_unterminated_comment_is_blamed_where_it_opens() {
    refused("unterminated_comment.cu", "dpopt::unterminated", 9, 3, "/*");
}

#[test]
fn diagnostics_on_very_long_lines_render() {
    refused("long_line.cu", "dpopt::unknown_clause", 8, 12, "treshold");
    refused(
        "long_line_error.cu",
        "dpopt::unknown_clause",
        7,
        90037,
        "treshold",
    );
}

#[test]
fn deep_nesting_is_read_or_refused_never_a_crash() {
    // In the grid: read as text, counted as grid x block (with a warning).
    let file = load("deep_grid.cu");
    let outcome = dpopt::run(&file, "out.cu", true);
    render_all(&file, &outcome);
    assert!(outcome.output.is_some());
    assert_eq!(outcome.diagnostics[0].kind.code(), "dpopt::thread_count");
    // In a clause: refused.
    refused("deep_pragma.cu", "dpopt::too_deep", 7, 295, "(");
    // Just under the limit: parsed, in a test thread's small stack.
    let text = String::from_utf8(load("deep_pragma.cu").bytes)
        .unwrap()
        .replace(&"(".repeat(10000), &"(".repeat(250))
        .replace(&")".repeat(10000), &")".repeat(250));
    let file = SourceFile::new("under.cu", text.into_bytes());
    let outcome = dpopt::run(&file, "out.cu", true);
    assert!(outcome.output.is_some(), "{:?}", outcome.diagnostics);
}

#[test]
fn same_names_in_two_namespaces_are_two_sites() {
    let file = load("namespaces_same_names.cu");
    let outcome = dpopt::run(&file, "out.cu", true);
    let ids: Vec<&str> = outcome.sites.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["a_parent_1", "b_parent_1"]);
    let out = applied("namespaces_same_names.cu", 2);
    let text = String::from_utf8_lossy(&out);
    // An explicit 0 or nullptr stream is the same as none.
    assert_eq!(
        text.matches("(DPOPT_DIRECT_STREAM)>>>").count(),
        2,
        "both launches go to the direct stream"
    );
    compiles_when_nvcc_is_here(&out);
}

/// CR (old Mac) and CRLF line endings: a lone `\r` ends a line for nvcc's
/// preprocessor, so lines, `#line` numbers and where generated
/// definitions go (inside each child's namespace) follow it.
#[test]
fn every_kind_of_line_ending() {
    let lf = std::fs::read(common::root().join("tests/contract/namespaces_same_names.cu")).unwrap();
    for ending in ["\r", "\r\n"] {
        let text = String::from_utf8(lf.clone()).unwrap().replace('\n', ending);
        let file = SourceFile::new("cr.cu", text.into_bytes());
        assert_eq!(file.newline, ending);
        let outcome = dpopt::run(&file, "out.cu", true);
        let rendered = render_all(&file, &outcome);
        let out = outcome
            .output
            .unwrap_or_else(|| panic!("refused:\n{rendered}"));
        assert_eq!(outcome.sites.len(), 2);
        // The pragmas are on lines 5 and 13 whatever the line ending.
        let locations: Vec<&str> = outcome.sites.iter().map(|s| s.location.as_str()).collect();
        assert_eq!(locations, ["cr.cu:5:1", "cr.cu:13:1"], "{ending:?}");
        let out = String::from_utf8(out).unwrap();
        assert!(
            !out.contains('\n') || ending == "\r\n",
            "generated code uses the file's ending"
        );
        let as_lf = out.replace("\r\n", "\n").replace('\r', "\n");
        for (ns, close) in [("a", "}  // namespace a"), ("b", "}  // namespace b")] {
            let open = as_lf.find(&format!("namespace {ns} {{")).unwrap();
            let close = as_lf.find(close).unwrap();
            let definition = as_lf[open..]
                .find("static __device__ void dpopt_serial_child(const dim3 dpopt_gridDim, const dim3 dpopt_blockDim, ")
                .map(|i| open + i);
            assert!(
                definition.is_some_and(|d| d < close),
                "{ending:?}: namespace {ns}'s serial child is not defined inside it:\n{as_lf}"
            );
        }
        // Every `#line N "out.cu"` names the line after it.
        for (i, line) in as_lf.lines().enumerate() {
            if let Some(n) = line
                .strip_prefix("#line ")
                .and_then(|l| l.strip_suffix(" \"out.cu\""))
            {
                assert_eq!(n.parse::<usize>().unwrap(), i + 2, "{ending:?}: {line}");
            }
        }
        compiles_when_nvcc_is_here(out.as_bytes());
    }
}

#[test]
fn overloads_with_the_same_arity_are_refused() {
    refused(
        "overloads_same_arity.cu",
        "dpopt::ambiguous_kernel",
        6,
        3,
        "child",
    );
}

#[test]
fn launch_configurations_as_written() {
    let file = load("config_as_written.cu");
    let outcome = dpopt::run(&file, "out.cu", true);
    assert!(outcome.output.is_some());
    let decided: Vec<(usize, String)> = outcome
        .diagnostics
        .iter()
        .map(|d| {
            assert_eq!(d.kind.code(), "dpopt::threshold_decided");
            (file.line_of(d.span.start()), d.kind.message())
        })
        .collect();
    assert_eq!(decided.len(), 3, "{decided:?}");
    assert_eq!(decided[0].0, 9);
    assert!(
        decided[0].1.contains("has 1 threads") && decided[0].1.contains("always runs serially")
    );
    assert_eq!(decided[1].0, 11);
    assert!(
        decided[1].1.contains("has 1024 threads") && decided[1].1.contains("never run serially")
    );
    assert_eq!(decided[2].0, 16);
    assert!(decided[2].1.contains("has 256 threads"));
}

#[test]
fn a_refused_threshold_is_not_also_called_decided() {
    // The child cannot run serially, and its thread count is a constant
    // below the threshold: the error alone, not also a warning that the
    // threshold always serializes it.
    let src = "__global__ void child(int *a) {\n  int v = __match_any_sync(0xffffffffu, a[threadIdx.x]);\n  a[threadIdx.x] = v;\n}\n__global__ void parent(int *a) {\n  #pragma dp threshold(128)\n  child<<<1, 64>>>(a);\n}\n";
    let file = dpopt::source::SourceFile::new("t.cu", src.as_bytes().to_vec());
    let outcome = dpopt::run(&file, "out.cu", true);
    assert!(outcome.output.is_none());
    let codes: Vec<&str> = outcome.diagnostics.iter().map(|d| d.kind.code()).collect();
    assert_eq!(codes, ["dpopt::not_serializable"]);
}
