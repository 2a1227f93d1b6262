//! Untouched code stays untouched: a file without `#pragma dp` comes out
//! byte-identical, and in a transformed file every byte outside the
//! rewritten launch sites appears unchanged and in order, but for the names
//! of the calls that allocate and free aggregated allocations.

mod common;

use dpopt::source::SourceFile;

#[test]
fn files_without_pragmas_are_reproduced_byte_for_byte() {
    for path in common::corpus() {
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes).replace("#pragma dp", "#pragma unroll");
        for input in [
            text.into_bytes(),
            b"\xef\xbb\xbfint x;\r\n// \xe9\n".to_vec(),
            Vec::new(),
        ] {
            let outcome = common::transform_bytes("plain.cu", &input);
            assert!(outcome.diagnostics.is_empty());
            assert_eq!(
                outcome.output.as_deref(),
                Some(&input[..]),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn code_outside_rewritten_sites_is_unchanged_and_in_order() {
    for path in common::corpus() {
        let bytes = std::fs::read(&path).unwrap();
        let file = SourceFile::new("in.cu", bytes.clone());
        let outcome = common::transform_with_headers(&file, "out.cu");
        // Chunks between sites (pragma start .. end of the launch statement),
        // each `#pragma dp acquire` marker alone, the `{` of a promoted
        // kernel's body, where the head's start may follow it on its line,
        // and each host launch of a `floor` parent.
        let cuts = dpopt::rewritten_ranges(&file);
        let promoted = outcome.sites.iter().filter(|s| s.promotion.is_some());
        let markers = outcome.sites.iter().filter(|s| s.marker.is_some());
        // And the host launches of a `floor` parent, which call its launcher
        // (the other cuts start at a directive or at a `{`).
        let host_launches = cuts
            .iter()
            .filter(|c| !matches!(bytes[c.start()], b'#' | b'%' | b'{'))
            .count();
        assert_eq!(
            cuts.len(),
            outcome.sites.len() + promoted.count() + markers.count() + host_launches,
            "{}",
            path.display()
        );
        // The callees of aggregated allocations and of their frees are
        // renamed: their lines appear with those names replaced.
        let renamed = dpopt::renamed_calls(&file);
        let output = outcome.output.expect("transforms");
        // Every original line outside the sites appears unchanged, in order.
        let output_lines: Vec<&[u8]> = output.split_inclusive(|&b| b == b'\n').collect();
        let mut cursor = 0;
        let mut offset = 0;
        let mut checked = 0;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            let range = offset..offset + line.len();
            offset += line.len();
            if cuts
                .iter()
                .any(|c| c.start() < range.end && range.start < c.end())
            {
                continue;
            }
            let mut expected = Vec::new();
            let mut at = range.start;
            for (callee, name) in renamed.iter().filter(|r| range.contains(&r.0.start())) {
                expected.extend_from_slice(&bytes[at..callee.start()]);
                expected.extend_from_slice(name.as_bytes());
                at = callee.end();
            }
            expected.extend_from_slice(&bytes[at..range.end]);
            let line = &expected[..];
            let found = output_lines[cursor..]
                .iter()
                .position(|l| *l == line)
                .unwrap_or_else(|| {
                    panic!(
                        "{}: original line {:?} is not in the output (in order)",
                        path.display(),
                        String::from_utf8_lossy(line)
                    )
                });
            cursor += found + 1;
            checked += 1;
        }
        assert!(checked > 10, "{}", path.display());
    }
}

#[test]
fn line_directives_resynchronise_with_the_original() {
    // After every `#line N "in.cu"`, the next line is line N of the input.
    for path in common::corpus() {
        let bytes = std::fs::read(&path).unwrap();
        let file = SourceFile::new("in.cu", bytes.clone());
        let output = common::transform_with_headers(&file, "out.cu")
            .output
            .expect("transforms");
        let original: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let lines: Vec<&[u8]> = output.split(|&b| b == b'\n').collect();
        let mut checked = 0;
        for (i, line) in lines.iter().enumerate() {
            let text = String::from_utf8_lossy(line);
            let Some(rest) = text.strip_prefix("#line ") else {
                continue;
            };
            let mut parts = rest.trim_end().splitn(2, ' ');
            let n: usize = parts.next().unwrap().parse().unwrap();
            let name = parts.next().unwrap();
            // A `#line` directly followed by another one has no effect.
            let overridden = lines.get(i + 1).is_some_and(|l| l.starts_with(b"#line "));
            if name == "\"in.cu\"" && i + 1 < lines.len() && n <= original.len() && !overridden {
                let next = lines[i + 1];
                let orig = original[n - 1];
                // The next output line is the original line or its tail
                // (after a rewritten launch), or a generated line that
                // carries user text from that line (a part of the launch).
                let orig_text = String::from_utf8_lossy(orig);
                let next_text = String::from_utf8_lossy(next);
                // Or the launch's arguments, when they share the line with
                // the end of its configuration (the stream on a second line).
                let arguments = orig_text.split_once(">>>(").map(|(_, a)| {
                    a.trim_end()
                        .trim_end_matches(';')
                        .trim_end_matches(')')
                        .to_string()
                });
                let carries_arguments =
                    arguments.is_some_and(|a| !a.is_empty() && next_text.contains(a.as_str()));
                let carries = carries_arguments
                    || next_text.to_ascii_lowercase().contains("dpopt")
                        && orig_text
                            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .map(str::trim)
                            .filter(|p| !p.is_empty())
                            .any(|p| next_text.contains(p));
                // A line that generated text splits (a promoted kernel's
                // `{` followed by the head's start) shows its head first.
                let split = orig.starts_with(next)
                    && lines.get(i + 2).is_some_and(|l| l.starts_with(b"#line "));
                // A launch's arguments continued on this line, after the
                // separator the launch's template writes between them.
                let continued = next_text
                    .trim_start()
                    .strip_prefix(',')
                    .is_some_and(|rest| {
                        let core = orig_text.trim().trim_end_matches(';').trim_end_matches(')');
                        !core.is_empty() && rest.trim_start().starts_with(core)
                    });
                // A `__shared__` declaration of a split child or of a callee
                // it runs in place: the user's declaration without the
                // `static` and `__shared__` its local copy drops (a comment
                // after it stays in the original only).
                let local_copy = {
                    let dropped = orig_text.replace("static ", "").replace("__shared__ ", "");
                    let next_trim = next_text.trim();
                    orig_text.contains("__shared__")
                        && !next_trim.is_empty()
                        && dropped.trim().starts_with(next_trim)
                };
                assert!(
                    orig.ends_with(next) || carries || split || continued || local_copy,
                    "{}: after `#line {n}` expected a tail of {:?}, got {:?}",
                    path.display(),
                    String::from_utf8_lossy(orig),
                    String::from_utf8_lossy(next)
                );
                checked += 1;
            } else if name == "\"out.cu\"" {
                assert!(
                    n == i + 2,
                    "{}: `#line {n} \"out.cu\"` stands on line {}",
                    path.display(),
                    i + 1
                );
            }
        }
        assert!(
            checked > 0,
            "{}: no #line directive checked",
            path.display()
        );
    }
}
