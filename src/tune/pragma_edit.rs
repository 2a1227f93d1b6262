//! Rewriting the tuned clauses of `#pragma dp` lines in place: the build
//! variants of a search and `dpopt tune --write`. Only the pragma lines
//! named change; every other byte of the file stays as it was.

/// A `#pragma dp` directive: its bytes (with continuation lines, without
/// the final newline) and its first line (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PragmaLine {
    pub start: usize,
    pub end: usize,
    pub line: usize,
}

/// The clauses a search sets; every other clause (`buffer`, `threads`,
/// `work`, ...) is kept as written.
const TUNED: [&str; 4] = ["threshold", "coarsen", "consldt", "agg_threshold"];

/// Every `#pragma dp` directive of `text`, in order.
pub fn pragma_lines(text: &str) -> Vec<PragmaLine> {
    let mut out = Vec::new();
    let mut offset = 0;
    let mut pending: Option<PragmaLine> = None;
    for (line, raw) in (1..).zip(text.split_inclusive('\n')) {
        let content = raw.trim_end_matches(['\n', '\r']);
        let continues = content.trim_end().ends_with('\\');
        if let Some(p) = pending.as_mut() {
            p.end = offset + content.len();
        } else if crate::pragma::is_dp_pragma(content) {
            pending = Some(PragmaLine {
                start: offset,
                end: offset + content.len(),
                line,
            });
        }
        if !continues {
            out.extend(pending.take());
        }
        offset += raw.len();
    }
    out.extend(pending);
    out
}

/// The clauses of a directive's text after `dp`: `name(args)` or `name`,
/// separated by spaces, commas or line continuations.
fn clauses(body: &str) -> Vec<String> {
    let chars: Vec<char> = body.chars().collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        if chars[k].is_whitespace() || chars[k] == ',' || chars[k] == '\\' {
            k += 1;
            continue;
        }
        let mut clause = String::new();
        while k < chars.len() && (chars[k].is_alphanumeric() || chars[k] == '_') {
            clause.push(chars[k]);
            k += 1;
        }
        let mut look = k;
        while look < chars.len() && chars[look].is_whitespace() {
            look += 1;
        }
        if look < chars.len() && chars[look] == '(' {
            let mut depth = 0;
            k = look;
            while k < chars.len() {
                let c = chars[k];
                k += 1;
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    '\\' | '\n' | '\r' => continue,
                    _ => {}
                }
                clause.push(c);
                if depth == 0 {
                    break;
                }
            }
        } else if clause.is_empty() {
            clause.push(chars[k]);
            k += 1;
        }
        out.push(clause);
    }
    out
}

fn clause_name(clause: &str) -> &str {
    clause
        .split(|c: char| c == '(' || c.is_whitespace())
        .next()
        .unwrap_or("")
}

/// The directive with its tuned clauses replaced by `tuned` (the other
/// clauses kept, in their order, before them), on one line.
pub fn rewrite_directive(directive: &str, tuned: &[String]) -> String {
    let indent: String = directive
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let after_dp = directive.find("dp").map_or("", |k| &directive[k + 2..]);
    let mut kept: Vec<String> = clauses(after_dp)
        .into_iter()
        .filter(|c| !TUNED.contains(&clause_name(c)))
        .collect();
    kept.extend(tuned.iter().cloned());
    if kept.is_empty() {
        // A directive needs a clause: threshold 1 launches every child as
        // written (into a fire-and-forget stream).
        kept.push("threshold(1)".into());
    }
    format!("{indent}#pragma dp {}", kept.join(" "))
}

/// `text` with the directive starting on each given line rewritten with its
/// clauses; every other byte unchanged. Lines that hold no directive are
/// an error.
pub fn rewrite(text: &str, edits: &[(usize, Vec<String>)]) -> Result<String, String> {
    let lines = pragma_lines(text);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut sorted: Vec<&(usize, Vec<String>)> = edits.iter().collect();
    sorted.sort_by_key(|e| e.0);
    for (line, tuned) in sorted {
        let p = lines
            .iter()
            .find(|p| p.line == *line)
            .ok_or_else(|| format!("line {line} holds no `#pragma dp` any more"))?;
        out.push_str(&text[at..p.start]);
        out.push_str(&rewrite_directive(&text[p.start..p.end], tuned));
        at = p.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_directives_with_continuations() {
        let text = "int a;\n#pragma dp threshold(64) \\\n   coarsen(2)\nk<<<1,1>>>();\n  # pragma dp consldt(warp)\n#pragma once\n";
        let lines = pragma_lines(text);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].line, 2);
        assert_eq!(
            &text[lines[0].start..lines[0].end],
            "#pragma dp threshold(64) \\\n   coarsen(2)"
        );
        assert_eq!(lines[1].line, 5);
    }

    #[test]
    fn keeps_other_clauses_and_every_other_byte() {
        let text = "a\r\n    #pragma dp threshold(128) buffer(1024) consldt(multiblock, 8) coarsen(8)\r\nb\n";
        let out = rewrite(
            text,
            &[(2, vec!["threshold(32)".into(), "consldt(grid)".into()])],
        )
        .unwrap();
        assert_eq!(
            out,
            "a\r\n    #pragma dp buffer(1024) threshold(32) consldt(grid)\r\nb\n"
        );
    }

    #[test]
    fn an_empty_choice_still_has_a_clause() {
        assert_eq!(
            rewrite_directive("#pragma dp coarsen(8)", &[]),
            "#pragma dp threshold(1)"
        );
    }

    #[test]
    fn a_line_without_directive_is_an_error() {
        assert!(rewrite("int a;\n", &[(1, vec![])]).is_err());
    }
}
