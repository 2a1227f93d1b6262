//! C++ translation phases 1-3 for the text of one pragma, as the
//! preprocessor sees it: line splices (`\` + newline) are removed, comments
//! become one space, and the `%:` digraph stands for `#`. The result keeps a
//! map from each of its bytes back to the byte of the source it came from,
//! so that diagnostics point into the file as written.
//!
//! The lexer (grammar.pest) applies the same rules to the whole file when it
//! decides what is a directive; this module turns one directive (or the
//! string of a `_Pragma` operator) into the text the pragma grammar reads.

/// Text after translation phases 1-3, with its source offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogicalText {
    /// The text as the preprocessor sees it.
    pub text: String,
    /// `origin[i]`: source offset of byte `i` of `text`; one more entry for
    /// the end of the text.
    origin: Vec<usize>,
}

impl LogicalText {
    /// Build from pieces (text, source offset of its first byte) where
    /// consecutive bytes of a piece come from consecutive source bytes.
    fn new() -> Self {
        LogicalText {
            text: String::new(),
            origin: Vec::new(),
        }
    }

    fn push(&mut self, c: u8, at: usize) {
        // NUL is a blank for GCC (it warns and ignores it).
        let c = if c == 0 { b' ' } else { c };
        self.text.push(c as char);
        self.origin.push(at);
    }

    fn finish(mut self, end: usize) -> Self {
        self.origin.push(end);
        self
    }

    /// The source span of a range of `text`.
    pub fn source_span(&self, range: std::ops::Range<usize>) -> crate::source::Span {
        let start = self.origin[range.start.min(self.text.len())];
        let end = if range.end == 0 || range.end <= range.start {
            start
        } else {
            self.origin[(range.end - 1).min(self.text.len())] + 1
        };
        crate::source::Span::new(start, end.max(start))
    }
}

/// Phases 1-3 of a directive's text starting at source offset `offset`:
/// splices removed, each comment replaced by one space, a leading `%:`
/// written as `#`. `text` is ASCII (the file's view).
pub fn directive_text(text: &str, offset: usize) -> LogicalText {
    let bytes = text.as_bytes();
    let mut out = LogicalText::new();
    let mut i = 0;
    let mut seen_hash = false;
    while i < bytes.len() {
        if let Some(len) = splice_at(bytes, i) {
            i += len;
            continue;
        }
        let b = bytes[i];
        if !seen_hash && b == b'%' && next_significant(bytes, i + 1).map(|n| n.0) == Some(b':') {
            // `%:` (possibly split by splices) is `#`.
            let (_, skip) = next_significant_pos(bytes, i + 1);
            out.push(b'#', offset + i);
            seen_hash = true;
            i = skip + 1;
            continue;
        }
        if b == b'#' {
            seen_hash = true;
        }
        if b == b'/' {
            match next_significant(bytes, i + 1) {
                Some((b'*', _)) => {
                    let (_, star) = next_significant_pos(bytes, i + 1);
                    let end = block_comment_end(bytes, star + 1);
                    out.push(b' ', offset + i);
                    i = end;
                    continue;
                }
                Some((b'/', _)) => {
                    // A line comment runs to the end of the (logical) line:
                    // the end of the directive.
                    out.push(b' ', offset + i);
                    i = bytes.len();
                    continue;
                }
                _ => {}
            }
        }
        if b.is_ascii_alphanumeric()
            || b == b'_'
            || b == b'$'
            || b == b'.' && starts_number(bytes, i)
        {
            // A word or pp-number whole: the `'` of a digit separator
            // (`1'8`) opens no character literal.
            let end = if starts_number(bytes, i) {
                pp_number_end(bytes, i)
            } else {
                let mut j = i;
                while j < bytes.len() {
                    if let Some(len) = splice_at(bytes, j) {
                        j += len;
                    } else if bytes[j].is_ascii_alphanumeric()
                        || bytes[j] == b'_'
                        || bytes[j] == b'$'
                    {
                        j += 1;
                    } else {
                        break;
                    }
                }
                j
            };
            while i < end {
                match splice_at(bytes, i) {
                    Some(len) => i += len,
                    None => {
                        out.push(bytes[i], offset + i);
                        i += 1;
                    }
                }
            }
            continue;
        }
        if b == b'"' || b == b'\'' {
            // Copy a literal whole, so that `/*` inside it is not a comment.
            out.push(b, offset + i);
            i += 1;
            while i < bytes.len() {
                if let Some(len) = splice_at(bytes, i) {
                    i += len;
                    continue;
                }
                let c = bytes[i];
                out.push(c, offset + i);
                i += 1;
                if c == b'\\' && i < bytes.len() && splice_at(bytes, i).is_none() {
                    out.push(bytes[i], offset + i);
                    i += 1;
                } else if c == b {
                    break;
                }
            }
            continue;
        }
        out.push(b, offset + i);
        i += 1;
    }
    out.finish(offset + bytes.len())
}

/// The text with its line splices removed (phase 2 alone).
pub fn without_splices(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match splice_at(bytes, i) {
            Some(len) => i += len,
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The length of a line splice (`\` + `\n` or `\r\n`, the backslash possibly
/// followed by blanks as GCC and nvcc accept) at `i`, if there is one.
fn splice_at(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes.get(i) != Some(&b'\\') {
        return None;
    }
    let mut j = i + 1;
    while matches!(bytes.get(j), Some(b' ' | b'\t' | 0x0b | 0x0c | 0)) {
        j += 1;
    }
    match bytes.get(j) {
        Some(b'\n') => Some(j + 1 - i),
        Some(b'\r') if bytes.get(j + 1) == Some(&b'\n') => Some(j + 2 - i),
        Some(b'\r') => Some(j + 1 - i),
        _ => None,
    }
}

/// The next byte at or after `i` that is not part of a splice.
/// The end of the pp-number that starts at `i` (a digit, or `.` and a
/// digit): digits, letters, `_`, `.`, an exponent's sign (`e+`, `p-`), and
/// C++14 digit separators (`'` before a digit, letter or `_`), splices
/// inside skipped. A `'` in `1'8` is part of the number, not a character
/// literal.
fn pp_number_end(bytes: &[u8], i: usize) -> usize {
    let after_splices = |mut j: usize| {
        while let Some(len) = splice_at(bytes, j) {
            j += len;
        }
        j
    };
    let continues = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut end = i + 1;
    loop {
        let j = after_splices(end);
        match bytes.get(j) {
            Some(b'e' | b'E' | b'p' | b'P') => {
                let k = after_splices(j + 1);
                end = if matches!(bytes.get(k), Some(b'+' | b'-')) {
                    k + 1
                } else {
                    j + 1
                };
            }
            Some(&c) if continues(c) || c == b'.' => end = j + 1,
            Some(b'\'') => {
                let k = after_splices(j + 1);
                match bytes.get(k) {
                    Some(&c) if continues(c) => end = k + 1,
                    _ => return end,
                }
            }
            _ => return end,
        }
    }
}

/// Does a pp-number start at `i`?
fn starts_number(bytes: &[u8], i: usize) -> bool {
    bytes[i].is_ascii_digit()
        || bytes[i] == b'.'
            && next_significant(bytes, i + 1).is_some_and(|(c, _)| c.is_ascii_digit())
}

fn next_significant(bytes: &[u8], i: usize) -> Option<(u8, usize)> {
    let (b, at) = next_significant_pos(bytes, i);
    b.map(|b| (b, at - i))
}

fn next_significant_pos(bytes: &[u8], mut i: usize) -> (Option<u8>, usize) {
    while let Some(len) = splice_at(bytes, i) {
        i += len;
    }
    (bytes.get(i).copied(), i)
}

/// Offset just past the `*/` closing a comment whose body starts at `i`
/// (splices may split the `*/`), or the end of the text.
fn block_comment_end(bytes: &[u8], i: usize) -> usize {
    block_comment_close(bytes, i).unwrap_or(bytes.len())
}

/// Offset just past the `*/` closing a comment whose body starts at `i`
/// (splices may split the `*/`), if the text holds one.
fn block_comment_close(bytes: &[u8], mut i: usize) -> Option<usize> {
    while i < bytes.len() {
        if bytes[i] == b'*' {
            let (next, at) = next_significant_pos(bytes, i + 1);
            if next == Some(b'/') {
                return Some(at + 1);
            }
        }
        i += 1;
    }
    None
}

/// Offset just past an ordinary string or character literal whose body
/// starts at `i` (`q` its quote): after the closing quote, or at the end of
/// its line; splices are skipped and a backslash escapes the next character.
fn literal_end(bytes: &[u8], mut i: usize, q: u8) -> usize {
    while i < bytes.len() {
        if let Some(len) = splice_at(bytes, i) {
            i += len;
            continue;
        }
        let c = bytes[i];
        i += 1;
        if c == b'\\' && i < bytes.len() && splice_at(bytes, i).is_none() {
            i += 1;
        } else if c == q || c == b'\n' || c == b'\r' {
            break;
        }
    }
    i
}

/// What a directive leaves open past its line, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unclosed {
    /// A `/*` that the text never closes (the comment runs on past the
    /// directive), at this offset.
    Comment(usize),
    /// A raw string literal whose prefix starts at this offset and that the
    /// line does not close: in a directive it ends with the line (GCC
    /// reports it unterminated).
    RawString(usize),
}

/// The first comment or raw string literal of a directive's text (splices
/// included) that the text leaves open. Ordinary literals, `//` comments and
/// identifiers that merely end in `R` (`FOOR"(` is a word and a string) are
/// skipped; splices may split `/*` and `*/` as they do for the preprocessor.
pub fn unclosed_in_directive(text: &str) -> Option<Unclosed> {
    const PREFIXES: &[&str] = &["R", "LR", "uR", "UR", "u8R"];
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if let Some(len) = splice_at(bytes, i) {
            i += len;
            continue;
        }
        match bytes[i] {
            q @ (b'"' | b'\'') => i = literal_end(bytes, i + 1, q),
            // `1'8`: a digit separator, not a character literal.
            _ if starts_number(bytes, i) => i = pp_number_end(bytes, i),
            b'/' => match next_significant(bytes, i + 1) {
                Some((b'*', _)) => {
                    let (_, star) = next_significant_pos(bytes, i + 1);
                    match block_comment_close(bytes, star + 1) {
                        Some(end) => i = end,
                        None => return Some(Unclosed::Comment(i)),
                    }
                }
                // A line comment runs to the end of the directive.
                Some((b'/', _)) => return None,
                _ => i += 1,
            },
            b if word(b) => {
                let start = i;
                while i < bytes.len() && (word(bytes[i]) || bytes[i] == b'.') {
                    i += 1;
                }
                if bytes.get(i) == Some(&b'"') && PREFIXES.contains(&&text[start..i]) {
                    let open = i + 1;
                    // The directive's text is its logical line (splices
                    // continue it): the raw string may close anywhere in it.
                    let line = text;
                    let Some(paren) = line[open..].find('(').map(|p| open + p) else {
                        return Some(Unclosed::RawString(start));
                    };
                    let close = format!("){}\"", &line[open..paren]);
                    match line[paren + 1..].find(&close) {
                        Some(at) => i = paren + 1 + at + close.len(),
                        None => return Some(Unclosed::RawString(start)),
                    }
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The text of the string literal of `_Pragma("...")` (token text including
/// its quotes, at source offset `offset`), destringized as C++ [cpp.pragma.op]
/// says: the `L`/`u8`/`u`/`U` prefix and the quotes are removed, `\"` becomes
/// `"` and `\\` becomes `\`. The result starts with `#pragma ` so that the
/// pragma grammar reads it like a directive; those 8 bytes map to
/// `operator_start`.
pub fn pragma_operator_text(literal: &str, offset: usize, operator_start: usize) -> LogicalText {
    let mut out = LogicalText::new();
    for b in b"#pragma " {
        out.push(*b, operator_start);
    }
    let bytes = literal.as_bytes();
    let Some(open) = literal.find('"') else {
        return out.finish(offset + bytes.len());
    };
    let mut i = open + 1;
    let end = if bytes.len() > i && bytes.ends_with(b"\"") {
        bytes.len() - 1
    } else {
        bytes.len()
    };
    while i < end {
        if let Some(len) = splice_at(bytes, i) {
            i += len;
            continue;
        }
        if bytes[i] == b'\\' && matches!(bytes.get(i + 1), Some(b'"' | b'\\')) && i + 1 < end {
            out.push(bytes[i + 1], offset + i + 1);
            i += 2;
            continue;
        }
        out.push(bytes[i], offset + i);
        i += 1;
    }
    out.finish(offset + end)
}

/// Is this logical text a `#pragma dp` directive (`#`, `pragma`, `dp` as
/// whole words, blanks between)?
pub fn is_dp_pragma_text(logical: &str) -> bool {
    let Some(rest) = logical.trim_start().strip_prefix('#') else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix("pragma") else {
        return false;
    };
    if !rest.starts_with(|c: char| c.is_ascii_whitespace()) {
        return false;
    }
    match rest.trim_start().strip_prefix("dp") {
        // `$` continues an identifier for GCC, as letters and `_` do.
        Some(after) => {
            !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        }
        None => false,
    }
}

/// Is the text (a `_Pragma` operator's destringized literal) a `dp` pragma?
pub fn is_dp_operator_text(content: &str) -> bool {
    is_dp_pragma_text(&format!("#pragma {content}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    fn logical(text: &str) -> String {
        directive_text(text, 0).text
    }

    #[test]
    fn splices_join_words() {
        assert_eq!(logical("#pra\\\ngma d\\\r\np x"), "#pragma dp x");
    }

    #[test]
    fn unclosed_raw_strings_in_directives() {
        assert_eq!(
            unclosed_in_directive("#define _ R\"(\\\n_Pragma(\"dp)\")"),
            None,
            "closed on the spliced line"
        );
        assert_eq!(
            unclosed_in_directive("#define _(R\"(/*"),
            Some(Unclosed::RawString(10))
        );
        assert_eq!(unclosed_in_directive("#define S R\"x(a)x\" R\"(b)\""), None);
        assert_eq!(unclosed_in_directive("#define S FOOR\"(\""), None);
        assert_eq!(unclosed_in_directive("#define S \"R\\\"(\" // R\"("), None);
        assert_eq!(
            unclosed_in_directive("#define S /* R\"( */ u8R\"d("),
            Some(Unclosed::RawString(20))
        );
    }

    #[test]
    fn unclosed_comments_follow_splices() {
        assert_eq!(
            unclosed_in_directive("#define U(R\"(\"/*)\""),
            None,
            "a raw string holds the /*"
        );
        assert_eq!(unclosed_in_directive("#pragma dp /* x */"), None);
        assert_eq!(
            unclosed_in_directive("#pragma dp /* x"),
            Some(Unclosed::Comment(11))
        );
        // `/**\` newline `//*/`: the splice makes `/**//*/`: a closed comment, then `/*/`.
        assert_eq!(
            unclosed_in_directive("%:pragma dp/**\\\n//*/\n"),
            Some(Unclosed::Comment(17))
        );
        assert_eq!(unclosed_in_directive("#pragma dp \"/*\" // /*"), None);
        assert_eq!(unclosed_in_directive("#pragma dp /\\\n* x *\\\n/"), None);
        assert_eq!(logical("#\\\npragma dp"), "#pragma dp");
        assert!(is_dp_pragma_text(&logical("#pra\\  \ngma dp threshold(4)")));
    }

    #[test]
    fn comments_become_one_space() {
        assert_eq!(
            logical("#pragma/**/dp threshold(/* c */ 8) // x"),
            "#pragma dp threshold(  8)  "
        );
        assert_eq!(logical("#pragma dp /* a\n b */ x"), "#pragma dp   x");
        assert_eq!(logical("#pragma dp \"/*\" x"), "#pragma dp \"/*\" x");
    }

    #[test]
    fn digraph_hash() {
        assert_eq!(logical("%:pragma dp"), "#pragma dp");
        assert_eq!(logical("%\\\n:pragma dp"), "#pragma dp");
        assert!(is_dp_pragma_text(&logical("  %: pragma dp")));
    }

    #[test]
    fn offsets_map_back() {
        let l = directive_text("#pra\\\ngma dp threshold(4)", 10);
        let at = l.text.find("threshold").unwrap();
        assert_eq!(l.source_span(at..at + 9), Span::new(10 + 13, 10 + 22));
        let p = l.text.find("gma").unwrap();
        assert_eq!(l.source_span(p..p + 1), Span::new(16, 17));
    }

    #[test]
    fn pragma_operator_destringizes() {
        let lit = r#""dp threshold(4) child_threads(\"x\")""#;
        let l = pragma_operator_text(lit, 100, 90);
        assert_eq!(l.text, "#pragma dp threshold(4) child_threads(\"x\")");
        assert_eq!(l.source_span(0..1), Span::new(90, 91));
        assert_eq!(l.source_span(8..10), Span::new(101, 103));
        assert!(is_dp_operator_text("dp coarsen(2)"));
        assert!(!is_dp_operator_text("dpx"));
        assert!(!is_dp_operator_text("unroll"));
    }
}
