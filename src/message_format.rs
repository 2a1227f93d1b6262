//! How diagnostics are written: `human` (miette's graphical report, the
//! default), `short` (one `FILE:LINE:COL: error: MESSAGE [CODE]` line, as
//! gcc-style problem matchers read) or `json` (one JSON object per line,
//! miette's `JSONReportHandler` output with the file, line and column of the
//! diagnostic and of each span added).

use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use serde_json::{json, Map, Value};

/// The form of the diagnostics on standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum MessageFormat {
    /// Graphical reports with the source lines (miette).
    #[default]
    Human,
    /// One line per diagnostic: `FILE:LINE:COL: error: MESSAGE [CODE]`.
    Short,
    /// One JSON object per line per diagnostic.
    Json,
}

/// One diagnostic in `format`, without a final newline (a `human` report
/// may span several lines; `short` and `json` are one line).
pub fn render(diagnostic: &Diagnostic, unit: &SourceFile, format: MessageFormat) -> String {
    match format {
        MessageFormat::Human => format!("{:?}", diagnostic.to_report(unit)),
        MessageFormat::Short => short(diagnostic, unit),
        MessageFormat::Json => json(diagnostic, unit).to_string(),
    }
}

fn severity_word(diagnostic: &Diagnostic) -> &'static str {
    if diagnostic.is_error() {
        "error"
    } else {
        "warning"
    }
}

/// `FILE:LINE:COL: error: MESSAGE [CODE]` (with the help after ` help: `
/// when there is one, on the same line).
pub fn short(diagnostic: &Diagnostic, unit: &SourceFile) -> String {
    let mut line = format!(
        "{}: {}: {} [{}]",
        unit.location(diagnostic.span.start()),
        severity_word(diagnostic),
        diagnostic.kind.message(),
        diagnostic.kind.code()
    );
    if let Some(help) = diagnostic.kind.help() {
        line.push_str(" help: ");
        line.push_str(&help);
    }
    // One line whatever the message holds.
    line.replace(['\n', '\r'], " ")
}

/// Where a span is: file, 1-based line and column (bytes) of its start and
/// end.
fn place(unit: &SourceFile, span: &Span) -> Map<String, Value> {
    let (file, start) = unit.local(span.start());
    let base = span.start() - start;
    let end = span
        .end()
        .max(span.start())
        .saturating_sub(base)
        .min(file.bytes.len());
    let (line, column) = file.line_col(start);
    let (end_line, end_column) = file.line_col(end.max(start));
    let mut m = Map::new();
    m.insert("file".into(), json!(file.name));
    m.insert("line".into(), json!(line));
    m.insert("column".into(), json!(column));
    m.insert("end_line".into(), json!(end_line));
    m.insert("end_column".into(), json!(end_column));
    m
}

/// The diagnostic as miette's `JSONReportHandler` writes it, with `file`,
/// `line`, `column` of the primary span, the message without the location
/// prefix the graphical report shows, and `spans`: every span (primary
/// first, then the notes) with its file, line, column and label.
pub fn json(diagnostic: &Diagnostic, unit: &SourceFile) -> Value {
    let mut text = String::new();
    let report = diagnostic.to_report(unit);
    let mut value = match miette::JSONReportHandler::new().render_report(&mut text, report.as_ref())
    {
        Ok(()) => serde_json::from_str::<Value>(&text).unwrap_or_else(|_| json!({})),
        Err(_) => json!({}),
    };
    let Some(object) = value.as_object_mut() else {
        return value;
    };
    let primary = place(unit, &diagnostic.span);
    object.insert("message".into(), json!(diagnostic.kind.message()));
    object.insert("code".into(), json!(diagnostic.kind.code()));
    object.insert("severity".into(), json!(severity_word(diagnostic)));
    object.insert(
        "help".into(),
        diagnostic.kind.help().map_or(Value::Null, Value::String),
    );
    for key in ["file", "line", "column"] {
        object.insert(key.into(), primary[key].clone());
    }
    let mut spans = Vec::new();
    let mut first = primary;
    first.insert("label".into(), json!(diagnostic.label));
    first.insert("primary".into(), json!(true));
    spans.push(Value::Object(first));
    for (span, label) in &diagnostic.notes {
        let mut m = place(unit, span);
        m.insert("label".into(), json!(label));
        m.insert("primary".into(), json!(false));
        spans.push(Value::Object(m));
    }
    object.insert("spans".into(), Value::Array(spans));
    value
}
