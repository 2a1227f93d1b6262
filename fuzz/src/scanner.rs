//! The oracle's own C++ preprocessing scanner, independent of dpopt's lexer.
//!
//! It implements translation phases 1-3 (line splices, comments,
//! preprocessing tokens) and just enough of phase 4 to count the `#pragma dp`
//! directives a compiler would see: directives (`#` or `%:` first on a line,
//! comments before it allowed), the `_Pragma("dp ...")` operator, macros
//! whose expansion is such an operator, and `#if 0`-style dead groups.
//! Where GCC (nvcc's preprocessor) and the standard differ, it follows GCC:
//! a backslash followed by blanks and a newline is a line splice, NUL is a
//! blank, a lone CR ends a line, a UTF-8 byte order mark is skipped.
//! Trigraphs are not replaced (C++17 removed them).
//!
//! Where it cannot tell (a pragma in a dead `#if 0` group, a macro defined
//! under an unknown condition, an exotic macro body, text after a hard
//! lexical error), the pragma is counted as *optional*: dpopt may apply or
//! refuse it, either way is fine.

use std::collections::HashMap;
use std::ops::Range;

/// How a pragma was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Form {
    /// `#pragma dp ...` (comments, splices and blanks anywhere).
    Hash,
    /// `%:pragma dp ...`.
    Digraph,
    /// `_Pragma("dp ...")`.
    Operator,
    /// A use of a macro that expands to `_Pragma("dp ...")`.
    Macro,
}

/// One `#pragma dp` the preprocessor would execute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pragma {
    /// Original byte range (for a directive: `#` to the end of its line).
    pub span: Range<usize>,
    pub form: Form,
    /// `false`: the scanner cannot tell whether the preprocessor sees it.
    pub certain: bool,
}

/// Lexical problems the compiler would reject or warn about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AnomalyKind {
    UnterminatedBlockComment,
    UnterminatedRawString,
    InvalidRawDelimiter,
    UnterminatedString,
    UnterminatedChar,
    /// A directive GCC rejects (`#foo`), in a group that may be compiled:
    /// the file does not preprocess.
    InvalidDirective,
    /// `<...>` of an `#include` holding `/*`, `//`, `'` or `\`, whose meaning
    /// is implementation-defined ([lex.header]).
    OddHeaderName,
    /// A line that would be a directive inside the arguments of a
    /// function-like macro: undefined behaviour ([cpp.replace]/11).
    DirectiveInMacroArguments,
}

impl AnomalyKind {
    /// Hard anomalies change how the rest of the file is read.
    pub fn is_hard(self) -> bool {
        matches!(
            self,
            AnomalyKind::UnterminatedBlockComment
                | AnomalyKind::UnterminatedRawString
                | AnomalyKind::InvalidRawDelimiter
                | AnomalyKind::InvalidDirective
                | AnomalyKind::OddHeaderName
                | AnomalyKind::DirectiveInMacroArguments
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anomaly {
    pub kind: AnomalyKind,
    /// Original offset where the construct starts.
    pub at: usize,
}

/// Preprocessing token kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Newline,
    Space,
    LineComment,
    BlockComment,
    Ident,
    Number,
    Str,
    RawStr,
    Char,
    Punct,
    HeaderName,
    Other,
}

impl Kind {
    pub const COUNT: usize = 12;

    /// Blanks, newlines and comments.
    pub fn is_trivia(self) -> bool {
        matches!(
            self,
            Kind::Newline | Kind::Space | Kind::LineComment | Kind::BlockComment
        )
    }
}

/// A token: its kind and its range in the logical (spliced) text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// Bracket structure of the text outside directives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Brackets {
    /// Original offset of the first closing bracket that matches nothing.
    pub first_mismatch: Option<usize>,
    /// Original offset of the outermost opening bracket still open at the end.
    pub first_unclosed: Option<usize>,
}

impl Brackets {
    pub fn balanced(&self) -> bool {
        self.first_mismatch.is_none() && self.first_unclosed.is_none()
    }
}

/// Everything the oracle needs to know about one file.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub pragmas: Vec<Pragma>,
    pub anomalies: Vec<Anomaly>,
    /// `*/` outside any comment.
    pub stray_comment_ends: usize,
    pub brackets: Brackets,
    /// Number of tokens of each `Kind`.
    pub kind_counts: [u32; Kind::COUNT],
}

impl Scan {
    /// Pragmas the preprocessor certainly executes.
    pub fn certain(&self) -> usize {
        self.pragmas.iter().filter(|p| p.certain).count()
    }

    /// Pragmas it may or may not execute.
    pub fn optional(&self) -> usize {
        self.pragmas.len() - self.certain()
    }

    pub fn total(&self) -> usize {
        self.pragmas.len()
    }

    pub fn first_hard_anomaly(&self) -> Option<Anomaly> {
        self.anomalies
            .iter()
            .copied()
            .filter(|a| a.kind.is_hard())
            .min_by_key(|a| a.at)
    }

    pub fn hard_anomalies(&self) -> usize {
        self.anomalies.iter().filter(|a| a.kind.is_hard()).count()
    }
}

/// Scan a file.
pub fn scan(bytes: &[u8]) -> Scan {
    let lexed = Lexed::new(bytes);
    let mut scan = Scan {
        anomalies: lexed.anomalies.clone(),
        ..Scan::default()
    };
    for t in &lexed.tokens {
        scan.kind_counts[t.kind as usize] += 1;
    }
    scan.stray_comment_ends = lexed.stray_comment_ends;
    Analyzer::new(&lexed, &mut scan).run();
    scan
}

/// Original byte ranges of the significant tokens (no blanks or comments),
/// for token-level mutations.
pub fn significant_tokens(bytes: &[u8]) -> Vec<(Kind, Range<usize>)> {
    let lexed = Lexed::new(bytes);
    lexed
        .tokens
        .iter()
        .filter(|t| !t.kind.is_trivia())
        .map(|t| (t.kind, lexed.original_range(t)))
        .collect()
}

// ------------------------------------------------------------ phases 1-3 --

/// The logical text (line splices removed) and its tokens.
struct Lexed<'a> {
    original: &'a [u8],
    text: Vec<u8>,
    /// `orig[i]`: original offset of logical byte `i`; one extra entry for the end.
    orig: Vec<usize>,
    tokens: Vec<Token>,
    anomalies: Vec<Anomaly>,
    stray_comment_ends: usize,
}

/// If a line splice starts at `i` (a backslash, optional blanks, a newline),
/// the offset just after it.
fn splice_end(bytes: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | 0x0b | 0x0c | 0) {
        j += 1;
    }
    match bytes.get(j) {
        Some(b'\n') => Some(j + 1),
        Some(b'\r') if bytes.get(j + 1) == Some(&b'\n') => Some(j + 2),
        Some(b'\r') => Some(j + 1),
        _ => None,
    }
}

/// The length of the identifier character at `pos` (0 if there is none):
/// ASCII letters, `_`, `$`, digits (unless `start`), and any well-formed
/// UTF-8 sequence for a non-ASCII character, as GCC accepts them. A byte
/// that is not well-formed UTF-8 is a stray character, not part of a name.
fn ident_len(text: &[u8], pos: usize, start: bool) -> usize {
    let Some(&c) = text.get(pos) else {
        return 0;
    };
    if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || (!start && c.is_ascii_digit()) {
        return 1;
    }
    // A universal character name: `\uXXXX` or `\UXXXXXXXX`.
    if c == b'\\' {
        let digits = match text.get(pos + 1) {
            Some(b'u') => 4,
            Some(b'U') => 8,
            _ => return 0,
        };
        return match text.get(pos + 2..pos + 2 + digits) {
            Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => 2 + digits,
            _ => 0,
        };
    }
    let len = match c {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return 0,
    };
    match text.get(pos..pos + len) {
        Some(seq) if std::str::from_utf8(seq).is_ok() => len,
        _ => 0,
    }
}

/// Punctuators, longest first within each length.
const PUNCTUATORS: &[&str] = &[
    "%:%:", "<<=", ">>=", "->*", "...", "<=>", "::", "->", "++", "--", "<<", ">>", "<=", ">=",
    "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*", "##", "<:", ":>",
    "<%", "%>", "%:", "{", "}", "[", "]", "(", ")", ";", ",", ".", "?", ":", "~", "!", "+", "-",
    "*", "/", "%", "&", "|", "^", "<", ">", "=", "#",
];

const RAW_PREFIXES: &[&[u8]] = &[b"R", b"u8R", b"uR", b"UR", b"LR"];
const ENCODING_PREFIXES: &[&[u8]] = &[b"u8", b"u", b"U", b"L"];

impl<'a> Lexed<'a> {
    fn new(original: &'a [u8]) -> Self {
        let mut text = Vec::with_capacity(original.len());
        let mut orig = Vec::with_capacity(original.len() + 1);
        let mut i = if original.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        while i < original.len() {
            if original[i] == b'\\' {
                if let Some(next) = splice_end(original, i) {
                    i = next;
                    continue;
                }
            }
            text.push(original[i]);
            orig.push(i);
            i += 1;
        }
        orig.push(original.len());
        let mut lexed = Lexed {
            original,
            text,
            orig,
            tokens: Vec::new(),
            anomalies: Vec::new(),
            stray_comment_ends: 0,
        };
        lexed.lex();
        lexed
    }

    fn original_range(&self, t: &Token) -> Range<usize> {
        let start = self.orig[t.start];
        let end = if t.end > t.start {
            self.orig[t.end - 1] + 1
        } else {
            start
        };
        start..end
    }

    fn token_text(&self, t: &Token) -> &[u8] {
        &self.text[t.start..t.end]
    }

    fn anomaly(&mut self, kind: AnomalyKind, logical: usize) {
        let at = self.orig[logical];
        self.anomalies.push(Anomaly { kind, at });
    }

    fn lex(&mut self) {
        let n = self.text.len();
        let mut pos = 0;
        // Directive state, for header names: significant tokens seen on
        // this directive line (None outside directives), and whether it is
        // an `#include`-like directive.
        let mut at_bol = true;
        let mut directive: Option<usize> = None;
        let mut include = false;
        while pos < n {
            let c = self.text[pos];
            let next = self.text.get(pos + 1).copied();
            let (kind, end) = match c {
                b'\n' => (Kind::Newline, pos + 1),
                b'\r' => (
                    Kind::Newline,
                    if next == Some(b'\n') {
                        pos + 2
                    } else {
                        pos + 1
                    },
                ),
                b' ' | b'\t' | 0x0b | 0x0c | 0 => {
                    let mut e = pos + 1;
                    while e < n && matches!(self.text[e], b' ' | b'\t' | 0x0b | 0x0c | 0) {
                        e += 1;
                    }
                    (Kind::Space, e)
                }
                b'/' if next == Some(b'*') => match find(&self.text[pos + 2..], b"*/") {
                    Some(e) => (Kind::BlockComment, pos + 2 + e + 2),
                    None => {
                        self.anomaly(AnomalyKind::UnterminatedBlockComment, pos);
                        (Kind::BlockComment, n)
                    }
                },
                b'/' if next == Some(b'/') => (Kind::LineComment, line_end(&self.text, pos)),
                b'<' if include && directive == Some(2) => {
                    let e = line_end(&self.text, pos);
                    match self.text[pos..e].iter().position(|&b| b == b'>') {
                        Some(p) => {
                            let name = &self.text[pos..pos + p + 1];
                            let odd = find(name, b"/*").is_some()
                                || find(name, b"//").is_some()
                                || name.iter().any(|&b| b == b'\'' || b == b'\\');
                            if odd {
                                self.anomaly(AnomalyKind::OddHeaderName, pos);
                            }
                            (Kind::HeaderName, pos + p + 1)
                        }
                        None => (Kind::Punct, pos + 1),
                    }
                }
                _ if ident_len(&self.text, pos, true) > 0 => {
                    self.lex_identifier_or_literal(pos, directive.is_some())
                }
                c if c.is_ascii_digit() => (Kind::Number, self.lex_number(pos)),
                b'.' if next.is_some_and(|d| d.is_ascii_digit()) => {
                    (Kind::Number, self.lex_number(pos))
                }
                b'"' => self.lex_quoted(pos, pos, b'"'),
                b'\'' => self.lex_quoted(pos, pos, b'\''),
                _ => match self.punctuator(pos) {
                    Some(len) => (Kind::Punct, pos + len),
                    None => (Kind::Other, pos + 1),
                },
            };
            if kind == Kind::Punct && self.text[pos..end] == *b"*" && next == Some(b'/') {
                self.stray_comment_ends += 1;
            }
            // Directive bookkeeping (comments do not end the line start).
            match kind {
                Kind::Newline => {
                    at_bol = true;
                    directive = None;
                    include = false;
                }
                Kind::Space | Kind::LineComment | Kind::BlockComment => {}
                _ => {
                    let text = &self.text[pos..end];
                    if at_bol && (text == b"#" || text == b"%:") {
                        directive = Some(1);
                    } else if let Some(k) = directive {
                        if k == 1 {
                            include = matches!(text, b"include" | b"include_next" | b"import");
                        }
                        directive = Some(k + 1);
                    }
                    at_bol = false;
                }
            }
            self.tokens.push(Token {
                kind,
                start: pos,
                end,
            });
            pos = end;
        }
    }

    /// The length of the punctuator at `pos`, if any.
    fn punctuator(&self, pos: usize) -> Option<usize> {
        let rest = &self.text[pos..];
        // `<::` is `<` `::` unless followed by `:` or `>` (C++11 [lex.pptoken]).
        if rest.starts_with(b"<::") && !matches!(rest.get(3), Some(b':') | Some(b'>')) {
            return Some(1);
        }
        PUNCTUATORS
            .iter()
            .find(|p| rest.starts_with(p.as_bytes()))
            .map(|p| p.len())
    }

    fn lex_number(&self, pos: usize) -> usize {
        let t = &self.text;
        let mut e = pos + 1;
        while e < t.len() {
            let c = t[e];
            if matches!(c, b'e' | b'E' | b'p' | b'P') && matches!(t.get(e + 1), Some(b'+' | b'-')) {
                e += 2;
            } else if c == b'.' {
                e += 1;
            } else if ident_len(t, e, false) > 0 {
                e += ident_len(t, e, false);
            } else if c == b'\'' && ident_len(t, e + 1, false) > 0 {
                e += 1 + ident_len(t, e + 1, false);
            } else {
                break;
            }
        }
        e
    }

    fn lex_identifier_or_literal(&mut self, pos: usize, in_directive: bool) -> (Kind, usize) {
        let mut e = pos + ident_len(&self.text, pos, true);
        loop {
            match ident_len(&self.text, e, false) {
                0 => break,
                n => e += n,
            }
        }
        let word = &self.text[pos..e];
        let next = self.text.get(e).copied();
        if next == Some(b'"') && RAW_PREFIXES.contains(&word) {
            if let Some(end) = self.lex_raw_string(pos, e, in_directive) {
                return (Kind::RawStr, end);
            }
        } else if matches!(next, Some(b'"') | Some(b'\'')) && ENCODING_PREFIXES.contains(&word) {
            return self.lex_quoted(pos, e, next.unwrap_or(b'"'));
        }
        (Kind::Ident, e)
    }

    /// A string or character literal whose quote is at `quote`.
    fn lex_quoted(&mut self, start: usize, quote: usize, q: u8) -> (Kind, usize) {
        let t = &self.text;
        let mut e = quote + 1;
        loop {
            match t.get(e) {
                None | Some(b'\n') | Some(b'\r') => {
                    let kind = if q == b'"' {
                        AnomalyKind::UnterminatedString
                    } else {
                        AnomalyKind::UnterminatedChar
                    };
                    self.anomaly(kind, start);
                    break;
                }
                // A backslash escapes the next character, but not a newline:
                // one left after splice removal (`"\\` + newline + an empty
                // line: only the last backslash of a line splices) ends the
                // line, as in GCC.
                Some(b'\\') => {
                    e += match t.get(e + 1) {
                        None | Some(b'\n') | Some(b'\r') => 1,
                        Some(_) => 2,
                    }
                }
                Some(&c) if c == q => {
                    e += 1;
                    break;
                }
                Some(_) => e += 1,
            }
        }
        // Keep `e` within the text.
        let e = e.min(self.text.len());
        (if q == b'"' { Kind::Str } else { Kind::Char }, e)
    }

    /// A raw string literal whose prefix starts at `start` and whose quote is
    /// at logical offset `quote`. Inside it, line splices are reverted: the
    /// original bytes are read. In a directive it ends with the line, as in
    /// GCC (unterminated otherwise). `None`: an invalid delimiter (the prefix
    /// is then an identifier).
    fn lex_raw_string(&mut self, start: usize, quote: usize, in_directive: bool) -> Option<usize> {
        let src = self.original;
        let open = self.orig[quote] + 1;
        let mut d = open;
        while d < src.len() && d - open <= 16 {
            match src[d] {
                b'(' => break,
                b' ' | b')' | b'\\' | b'\t' | 0x0b | 0x0c | b'\n' | b'\r' => {
                    d = src.len() + 1;
                }
                _ => d += 1,
            }
        }
        if d >= src.len() || d - open > 16 {
            self.anomaly(AnomalyKind::InvalidRawDelimiter, start);
            return None;
        }
        let mut closing = Vec::with_capacity(d - open + 2);
        closing.push(b')');
        closing.extend_from_slice(&src[open..d]);
        closing.push(b'"');
        // Where the search stops: the end of the file, or of the directive's line.
        let (limit, limit_orig) = if in_directive {
            let end = line_end(&self.text, quote);
            (end, self.orig[end])
        } else {
            (self.text.len(), src.len())
        };
        let body = &src[(d + 1).min(limit_orig)..limit_orig];
        match find(body, &closing) {
            Some(p) => {
                let end_orig = d + 1 + p + closing.len();
                Some(self.orig.partition_point(|&o| o < end_orig))
            }
            None => {
                self.anomaly(AnomalyKind::UnterminatedRawString, start);
                Some(limit)
            }
        }
    }
}

/// The end of the line (before its newline) that holds `pos`.
fn line_end(text: &[u8], pos: usize) -> usize {
    text[pos..]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map_or(text.len(), |p| pos + p)
}

pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

// ---------------------------------------------------------------- phase 4 --

/// Whether a group of lines is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Liveness {
    Dead,
    Unknown,
    Live,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    outer: Liveness,
    branch: Liveness,
    /// The best liveness among the branches so far: `Live` when one of them
    /// is certainly taken.
    taken: Liveness,
}

#[derive(Debug, Clone)]
struct Macro {
    params: Option<Vec<Vec<u8>>>,
    /// Significant tokens of the replacement list: (kind, text).
    body: Vec<(Kind, Vec<u8>)>,
    /// Defined whatever the configuration.
    certain: bool,
}

struct Analyzer<'l, 's> {
    lexed: &'l Lexed<'l>,
    scan: &'s mut Scan,
    /// Significant tokens outside directives are walked by index into
    /// `lexed.tokens`.
    stack: Vec<Frame>,
    macros: HashMap<Vec<u8>, Macro>,
    brackets: Vec<(u8, usize)>,
}

/// Directive names GCC accepts (besides the conditionals), and the null
/// directive and line markers, whose first token is not a name.
const KNOWN_DIRECTIVES: &[&[u8]] = &[
    b"",
    b"define",
    b"undef",
    b"include",
    b"include_next",
    b"import",
    b"line",
    b"error",
    b"warning",
    b"pragma",
    b"ident",
    b"sccs",
    b"assert",
    b"unassert",
    b"embed",
];

impl<'l, 's> Analyzer<'l, 's> {
    fn new(lexed: &'l Lexed<'l>, scan: &'s mut Scan) -> Self {
        Analyzer {
            lexed,
            scan,
            stack: Vec::new(),
            macros: HashMap::new(),
            brackets: Vec::new(),
        }
    }

    fn live(&self) -> Liveness {
        self.stack
            .last()
            .map_or(Liveness::Live, |f| f.outer.min(f.branch))
    }

    fn run(&mut self) {
        let toks = &self.lexed.tokens;
        let mut i = 0;
        let mut at_bol = true;
        while i < toks.len() {
            let t = toks[i];
            match t.kind {
                Kind::Newline => {
                    at_bol = true;
                    i += 1;
                }
                Kind::Space | Kind::LineComment | Kind::BlockComment => i += 1,
                _ => {
                    let text = self.lexed.token_text(&t);
                    if at_bol && (text == b"#" || text == b"%:") {
                        let end = toks[i..]
                            .iter()
                            .position(|t| t.kind == Kind::Newline)
                            .map_or(toks.len(), |p| i + p);
                        self.directive(i, end);
                        i = end;
                    } else {
                        at_bol = false;
                        i = self.text_token(i);
                    }
                }
            }
        }
        if let Some(&(_, at)) = self.brackets.first() {
            self.scan.brackets.first_unclosed = Some(at);
        }
    }

    fn text_of(&self, i: usize) -> &'l [u8] {
        self.lexed.token_text(&self.lexed.tokens[i])
    }

    /// Index of the next significant token at or after `i` (newlines
    /// included as trivia: macro invocations span lines).
    fn skip_trivia(&self, mut i: usize) -> usize {
        let toks = &self.lexed.tokens;
        while i < toks.len() && toks[i].kind.is_trivia() {
            i += 1;
        }
        i
    }

    fn original_span(&self, from: usize, to: usize) -> Range<usize> {
        let toks = &self.lexed.tokens;
        let start = self.lexed.original_range(&toks[from]).start;
        let end = self.lexed.original_range(&toks[to - 1]).end;
        start..end
    }

    fn push_pragma(&mut self, span: Range<usize>, form: Form, certain: bool) {
        let broken = self
            .scan
            .first_hard_anomaly()
            .is_some_and(|a| a.at < span.start);
        self.scan.pragmas.push(Pragma {
            span,
            form,
            certain: certain && !broken,
        });
    }

    /// A directive: tokens `from..to` (from the `#`, up to its newline).
    fn directive(&mut self, from: usize, to: usize) {
        let toks = &self.lexed.tokens;
        let sig: Vec<usize> = (from + 1..to)
            .filter(|&j| !toks[j].kind.is_trivia())
            .collect();
        let name = sig.first().map_or(&b""[..], |&j| self.text_of(j));
        let rest = &sig[sig.len().min(1)..];
        match name {
            b"if" => {
                let cond = self.condition(rest);
                self.push_group(cond);
            }
            b"ifdef" | b"ifndef" => {
                let defined = rest.first().map_or(Liveness::Unknown, |&j| self.defined(j));
                let cond = if name == b"ifdef" {
                    defined
                } else {
                    negate(defined)
                };
                self.push_group(cond);
            }
            b"elif" | b"elifdef" | b"elifndef" | b"else" => {
                let cond = match name {
                    b"else" => Liveness::Live,
                    b"elif" => self.condition(rest),
                    _ => Liveness::Unknown,
                };
                if let Some(f) = self.stack.last_mut() {
                    f.branch = match f.taken {
                        Liveness::Live => Liveness::Dead,
                        Liveness::Dead => cond,
                        Liveness::Unknown => cond.min(Liveness::Unknown),
                    };
                    f.taken = f.taken.max(cond);
                }
            }
            b"endif" => {
                self.stack.pop();
            }
            _ => {
                let live = self.live();
                let line_marker = sig.first().is_some_and(|&j| toks[j].kind == Kind::Number);
                // `#define` and `#undef` need a name ("macro names must be
                // identifiers").
                let nameless = matches!(name, b"define" | b"undef")
                    && !rest.first().is_some_and(|&j| toks[j].kind == Kind::Ident);
                let invalid = nameless || (!line_marker && !KNOWN_DIRECTIVES.contains(&name));
                if live != Liveness::Dead && invalid {
                    let at = self.lexed.original_range(&toks[from]).start;
                    self.scan.anomalies.push(Anomaly {
                        kind: AnomalyKind::InvalidDirective,
                        at,
                    });
                }
                if name == b"pragma" && rest.first().is_some_and(|&j| self.text_of(j) == b"dp") {
                    let form = if self.text_of(from) == b"%:" {
                        Form::Digraph
                    } else {
                        Form::Hash
                    };
                    let last = sig.last().copied().unwrap_or(from) + 1;
                    let span = self.original_span(from, last);
                    self.push_pragma(span, form, live != Liveness::Dead);
                } else if live != Liveness::Dead && name == b"define" {
                    self.define(rest, live == Liveness::Live);
                } else if live != Liveness::Dead && name == b"undef" {
                    if let Some(&j) = rest.first() {
                        self.macros.remove(self.text_of(j));
                    }
                }
            }
        }
    }

    fn push_group(&mut self, cond: Liveness) {
        let outer = self.live();
        self.stack.push(Frame {
            outer,
            branch: cond,
            taken: cond,
        });
    }

    /// Is the macro named by token `j` defined? `Unknown` unless this file
    /// defines it unconditionally (it may come from `-D`).
    fn defined(&self, j: usize) -> Liveness {
        match self.macros.get(self.text_of(j)) {
            Some(m) if m.certain => Liveness::Live,
            _ => Liveness::Unknown,
        }
    }

    /// Evaluate the few `#if` conditions whose value is certain.
    fn condition(&self, sig: &[usize]) -> Liveness {
        let words: Vec<&[u8]> = sig.iter().map(|&j| self.text_of(j)).collect();
        let inner: &[&[u8]] = match words.as_slice() {
            [open, inner @ .., close] if *open == b"(" && *close == b")" => inner,
            all => all,
        };
        match inner {
            [w] if *w == b"true" => Liveness::Live,
            [w] if *w == b"false" => Liveness::Dead,
            [w] if w.iter().all(u8::is_ascii_digit) => {
                if w.iter().all(|&d| d == b'0') {
                    Liveness::Dead
                } else {
                    Liveness::Live
                }
            }
            _ => Liveness::Unknown,
        }
    }

    fn define(&mut self, sig: &[usize], certain: bool) {
        let Some((&name_at, rest)) = sig.split_first() else {
            return;
        };
        let toks = &self.lexed.tokens;
        if toks[name_at].kind != Kind::Ident {
            return;
        }
        let name = self.text_of(name_at).to_vec();
        // Function-like when `(` follows the name without blank.
        let function_like = rest
            .first()
            .is_some_and(|&j| self.text_of(j) == b"(" && toks[j].start == toks[name_at].end);
        let (params, body) = if function_like {
            let close = rest.iter().position(|&j| self.text_of(j) == b")");
            let Some(close) = close else { return };
            let params = rest[1..close]
                .iter()
                .map(|&j| self.text_of(j))
                .filter(|t| *t != b",")
                .map(<[u8]>::to_vec)
                .collect();
            (Some(params), &rest[close + 1..])
        } else {
            (None, rest)
        };
        let body = body
            .iter()
            .map(|&j| (toks[j].kind, self.text_of(j).to_vec()))
            .collect();
        self.macros.insert(
            name,
            Macro {
                params,
                body,
                certain,
            },
        );
    }

    /// A significant token outside directives; returns the next index.
    fn text_token(&mut self, i: usize) -> usize {
        let t = self.lexed.tokens[i];
        let text = self.text_of(i);
        match t.kind {
            Kind::Punct => self.bracket(text, self.lexed.orig[t.start]),
            Kind::Ident if text == b"_Pragma" => return self.pragma_operator(i),
            Kind::Ident => {
                if let Some(m) = self.macros.get(text) {
                    let m = m.clone();
                    return self.macro_use(i, &m);
                }
            }
            _ => {}
        }
        i + 1
    }

    fn bracket(&mut self, text: &[u8], at: usize) {
        let (open, close) = match text {
            b"(" => (Some(b'('), None),
            b"[" | b"<:" => (Some(b'['), None),
            b"{" | b"<%" => (Some(b'{'), None),
            b")" => (None, Some(b'(')),
            b"]" | b":>" => (None, Some(b'[')),
            b"}" | b"%>" => (None, Some(b'{')),
            _ => (None, None),
        };
        if let Some(o) = open {
            self.brackets.push((o, at));
        } else if let Some(c) = close {
            match self.brackets.last() {
                Some(&(o, _)) if o == c => {
                    self.brackets.pop();
                }
                _ => {
                    self.scan.brackets.first_mismatch.get_or_insert(at);
                }
            }
        }
    }

    /// `_Pragma ( string-literal )` at token `i`.
    fn pragma_operator(&mut self, i: usize) -> usize {
        let toks = &self.lexed.tokens;
        let open = self.skip_trivia(i + 1);
        if open >= toks.len() || self.text_of(open) != b"(" {
            return i + 1;
        }
        let lit = self.skip_trivia(open + 1);
        let close = self.skip_trivia(lit + 1);
        let live = self.live();
        if close < toks.len() && self.text_of(close) == b")" {
            if let Some(is_dp) = destringized_is_dp(self.lexed, lit) {
                if is_dp {
                    let span = self.original_span(i, close + 1);
                    self.push_pragma(span, Form::Operator, live != Liveness::Dead);
                }
                return close + 1;
            }
        }
        // Not a well-formed operator (the compiler rejects it): whether it
        // names `dp` is anyone's guess.
        let span = self.original_span(i, open + 1);
        self.push_pragma(span, Form::Operator, false);
        open + 1
    }

    /// A use of macro `m` at token `i`.
    fn macro_use(&mut self, i: usize, m: &Macro) -> usize {
        let pragmas = self.pragma_operators(&m.body, 0);
        if pragmas == 0 {
            return i + 1;
        }
        let live = self.live();
        let toks = &self.lexed.tokens;
        let body: Vec<&[u8]> = m.body.iter().map(|(_, t)| t.as_slice()).collect();
        match &m.params {
            None => {
                // `#define P _Pragma("dp ...")`.
                let exact = body.len() == 4
                    && body[0] == b"_Pragma"
                    && body[1] == b"("
                    && body[3] == b")"
                    && m.body[2].0 == Kind::Str;
                let span = self.original_span(i, i + 1);
                if exact {
                    if let Some(is_dp) = string_is_dp(&m.body[2].1) {
                        if is_dp {
                            self.push_pragma(
                                span,
                                Form::Macro,
                                live != Liveness::Dead && m.certain,
                            );
                        }
                        return i + 1;
                    }
                }
                for _ in 0..pragmas {
                    self.push_pragma(span.clone(), Form::Macro, false);
                }
                i + 1
            }
            Some(params) => {
                let open = self.skip_trivia(i + 1);
                if open >= toks.len() || self.text_of(open) != b"(" {
                    return i + 1;
                }
                // The argument tokens, up to the matching `)`.
                let mut depth = 0usize;
                let mut close = None;
                let mut line_start = false;
                let mut directive = None;
                for (j, token) in toks.iter().enumerate().skip(open) {
                    match token.kind {
                        Kind::Newline => line_start = true,
                        Kind::Space | Kind::BlockComment => {}
                        _ => {
                            if line_start && matches!(self.text_of(j), b"#" | b"%:") {
                                directive.get_or_insert(j);
                            }
                            line_start = false;
                        }
                    }
                    match self.text_of(j) {
                        b"(" => depth += 1,
                        b")" => {
                            depth -= 1;
                            if depth == 0 {
                                close = Some(j);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let Some(close) = close else {
                    return i + 1;
                };
                if let Some(j) = directive {
                    let at = self.lexed.original_range(&toks[j]).start;
                    self.scan.anomalies.push(Anomaly {
                        kind: AnomalyKind::DirectiveInMacroArguments,
                        at,
                    });
                }
                let span = self.original_span(i, close + 1);
                // `#define P(x) _Pragma(#x)` used as `P(dp ...)`.
                let exact = params.len() == 1
                    && body.len() == 5
                    && body[0] == b"_Pragma"
                    && body[1] == b"("
                    && body[2] == b"#"
                    && body[3] == params[0].as_slice()
                    && body[4] == b")";
                if exact {
                    let first = self.skip_trivia(open + 1);
                    let is_dp = first < close
                        && toks[first].kind == Kind::Ident
                        && self.text_of(first) == b"dp";
                    if is_dp {
                        self.push_pragma(span, Form::Macro, live != Liveness::Dead && m.certain);
                    }
                } else {
                    for _ in 0..pragmas {
                        self.push_pragma(span.clone(), Form::Macro, false);
                    }
                }
                close + 1
            }
        }
    }
}

impl Analyzer<'_, '_> {
    /// How many `_Pragma` operators the expansion of `body` may produce.
    fn pragma_operators(&self, body: &[(Kind, Vec<u8>)], depth: usize) -> usize {
        if depth > 8 {
            return 0;
        }
        body.iter()
            .map(|(k, t)| match self.macros.get(t) {
                _ if t == b"_Pragma" => 1,
                Some(m) if *k == Kind::Ident => self.pragma_operators(&m.body, depth + 1),
                _ => 0,
            })
            .sum()
    }
}

fn negate(l: Liveness) -> Liveness {
    match l {
        Liveness::Live => Liveness::Dead,
        Liveness::Dead => Liveness::Live,
        Liveness::Unknown => Liveness::Unknown,
    }
}

/// Is token `lit` a string literal `_Pragma` accepts, and does its
/// destringized text start with the identifier `dp`? `None`: not a literal
/// `_Pragma` accepts.
fn destringized_is_dp(lexed: &Lexed, lit: usize) -> Option<bool> {
    let t = lexed.tokens.get(lit)?;
    if t.kind != Kind::Str {
        return None;
    }
    string_is_dp(lexed.token_text(t))
}

/// `"..."` or `L"..."`: destringize (C++ [cpp.pragma.op]) and check whether
/// the first preprocessing token is `dp`.
fn string_is_dp(literal: &[u8]) -> Option<bool> {
    let body = literal.strip_prefix(b"L").unwrap_or(literal);
    let body = body.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let mut text = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i] == b'\\' && matches!(body.get(i + 1), Some(b'"') | Some(b'\\')) {
            i += 1;
        }
        text.push(body[i]);
        i += 1;
    }
    let tokens = significant_tokens(&text);
    Some(
        tokens
            .first()
            .is_some_and(|(k, r)| *k == Kind::Ident && &text[r.clone()] == b"dp"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(text: &str) -> (usize, usize) {
        let s = scan(text.as_bytes());
        (s.certain(), s.optional())
    }

    #[test]
    fn directive_forms() {
        assert_eq!(count("#pragma dp threshold(8)\n"), (1, 0));
        assert_eq!(count("  # pragma dp x\n"), (1, 0));
        assert_eq!(count("%:pragma dp x\n"), (1, 0));
        assert_eq!(count("#\\\npragma dp x\n"), (1, 0));
        assert_eq!(count("#pra\\\ngma d\\\r\np x\n"), (1, 0));
        assert_eq!(count("#\\  \npragma dp x\n"), (1, 0));
        assert_eq!(count("# /*c*/ pragma /*d*/ dp x\n"), (1, 0));
        assert_eq!(count("/* a */ #pragma dp x\n"), (1, 0));
        assert_eq!(count("/* a\n b */ #pragma dp x\n"), (1, 0));
        assert_eq!(count("int a; /* a\n b */ #pragma dp x\n"), (0, 0));
        assert_eq!(count("x\r#pragma dp x\n"), (1, 0));
        assert_eq!(count("\0#pragma dp x\n"), (1, 0));
        assert_eq!(count("\u{feff}#pragma dp x\n"), (1, 0));
        assert_eq!(
            count("#pragma dp(1)\n#pragma dpx\n#pragma omp dp\n"),
            (1, 0)
        );
        assert_eq!(count("x #pragma dp x\n"), (0, 0));
        assert_eq!(count("##pragma dp x\n%:%:pragma dp x\n"), (0, 0));
    }

    #[test]
    fn comments_and_literals_hide_pragmas() {
        assert_eq!(count("// a \\\n#pragma dp x\n"), (0, 0));
        assert_eq!(count("/*\n#pragma dp x\n*/\n"), (0, 0));
        assert_eq!(count("const char *s = \"a\\\n#pragma dp x\";\n"), (0, 0));
        for prefix in ["", "L", "u8", "u", "U"] {
            let text = format!("auto s = {prefix}R\"xyz(\n#pragma dp x\n)xyz\";\n#pragma dp y\n");
            assert_eq!(count(&text), (1, 0), "{prefix}");
        }
        // Splices inside a raw string are reverted: `\` + newline stays.
        assert_eq!(count("auto s = R\"(a\\\n#pragma dp x\n)\";\n"), (0, 0));
        // Digit separators do not start character literals.
        assert_eq!(
            count("int a = 1'000;\n#pragma dp x\nint b = 2'0;\n"),
            (1, 0)
        );
        // An unterminated string or character literal ends at the newline.
        assert_eq!(count("\"abc\n#pragma dp x\n'a\n#pragma dp y\n"), (2, 0));
    }

    #[test]
    fn pragma_operator_and_macros() {
        assert_eq!(count("_Pragma(\"dp threshold(8)\")\n"), (1, 0));
        assert_eq!(count("_Pragma ( L\"dp x\" )\n"), (1, 0));
        assert_eq!(count("_Pragma(\"omp parallel\")\n"), (0, 0));
        assert_eq!(count("_Pragma(\"/* c */ dp x \\\"q\\\"\")\n"), (1, 0));
        assert_eq!(count("#define P _Pragma(\"dp x\")\nP\nP\n"), (2, 0));
        assert_eq!(
            count("#define P(x) _Pragma(#x)\nP(dp threshold(8))\nP(omp x)\n"),
            (1, 0)
        );
        assert_eq!(count("#define P _Pragma(\"dp x\")\n#undef P\nP\n"), (0, 0));
        assert_eq!(
            count("#ifdef A\n#define P _Pragma(\"dp x\")\n#endif\nP\n"),
            (0, 1)
        );
        assert_eq!(count("#define Q(x) _Pragma(x)\nQ(\"dp x\")\n"), (0, 1));
    }

    #[test]
    fn conditionals() {
        assert_eq!(
            count("#if 0\n#pragma dp x\n#else\n#pragma dp y\n#endif\n"),
            (1, 1)
        );
        assert_eq!(
            count("#if 1\n#pragma dp x\n#else\n#pragma dp y\n#endif\n"),
            (1, 1)
        );
        assert_eq!(
            count("#ifdef X\n#pragma dp x\n#else\n#pragma dp y\n#endif\n"),
            (2, 0)
        );
        assert_eq!(
            count("#if 0\n#if 1\n#pragma dp x\n#endif\n#endif\n#pragma dp y\n"),
            (1, 1)
        );
        assert_eq!(
            count("#define X\n#ifndef X\n#pragma dp x\n#endif\n"),
            (0, 1)
        );
        assert_eq!(
            count("#if 0\n/*\n#endif */\n#pragma dp x\n#endif\n"),
            (0, 1)
        );
    }

    #[test]
    fn anomalies_and_brackets() {
        let s = scan(b"void f() { /* x\n}\n#pragma dp y\n");
        assert_eq!(s.total(), 0);
        assert_eq!(
            s.first_hard_anomaly().map(|a| (a.kind, a.at)),
            Some((AnomalyKind::UnterminatedBlockComment, 11))
        );
        assert_eq!(s.brackets.first_unclosed, Some(9));
        let s = scan(b"auto s = R\"(abc\n#pragma dp x\n");
        assert_eq!(s.total(), 0);
        assert_eq!(s.hard_anomalies(), 1);
        let s = scan(b"int a = b */ c; /* */ x *= y; z */* */;\n");
        assert_eq!(s.stray_comment_ends, 2);
        let s = scan(b"f(a)) <% <: :> %>");
        assert_eq!(s.brackets.first_mismatch, Some(4));
        assert_eq!(s.brackets.first_unclosed, None);
        // Header names are not comments (GCC), but that is
        // implementation-defined: what follows is optional.
        let s = scan(b"#include <a//b.h>\n#pragma dp x\n");
        assert_eq!((s.certain(), s.total()), (0, 1));
        assert_eq!(scan(b"#include <a/b.h>\n#pragma dp x\n").certain(), 1);
    }

    #[test]
    fn utf8_names_and_stray_bytes() {
        // A stray byte is not part of a name; a UTF-8 letter is.
        assert_eq!(count("\u{e9}_Pragma(\"dp x\")\n"), (0, 0));
        let mut latin1 = b"\xdf_Pragma(\"dp x\")\n".to_vec();
        assert_eq!(scan(&latin1).certain(), 1);
        latin1.insert(0, b'#');
        assert_eq!(scan(&latin1).certain(), 0);
        assert_eq!(count("#pragma dp\u{e9} x\n"), (0, 0));
        assert_eq!(
            count("#pragma dp\\U000000e9 x\n#pragma dp \\u00e9\n"),
            (1, 0)
        );
    }

    #[test]
    fn raw_strings_in_directives_end_with_the_line() {
        // GCC: "unterminated raw string", and the next line is text.
        let s = scan(b"#define R\"(\n_Pragma(\"dp threshold(4)\") )\"\n");
        assert_eq!(s.total(), 1);
        let kinds: Vec<AnomalyKind> = s.anomalies.iter().map(|a| a.kind).collect();
        assert!(
            kinds.contains(&AnomalyKind::UnterminatedRawString),
            "{kinds:?}"
        );
        assert_eq!(scan(b"#define S R\"(a)\"\n#pragma dp x\n").certain(), 1);
        let s = scan(b"#define 1 x\n#pragma dp x\n");
        assert_eq!((s.certain(), s.total()), (0, 1));
    }

    #[test]
    fn invalid_directives_break_the_file() {
        let s = scan(b"#R x\n_Pragma(\"dp threshold(4)\")\n");
        assert_eq!((s.certain(), s.total()), (0, 1));
        assert_eq!(
            s.first_hard_anomaly().map(|a| a.kind),
            Some(AnomalyKind::InvalidDirective)
        );
        let s = scan(b"# 12 \"a.cu\"\n#\n#if 0\n#foo\n#endif\n#warning x\n");
        assert_eq!(s.hard_anomalies(), 0);
    }

    #[test]
    fn token_ranges_are_original_offsets() {
        let text = b"ab\\\ncd \"x\" 1'0";
        let t = significant_tokens(text);
        let words: Vec<&[u8]> = t.iter().map(|(_, r)| &text[r.clone()]).collect();
        assert_eq!(words, [&b"ab\\\ncd"[..], b"\"x\"", b"1'0"]);
    }
}
