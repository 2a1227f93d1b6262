//! Mutation operators. Each is named (the report counts cases and
//! violations per operator) and returns `None` when it does not apply to
//! its input (e.g. a pragma edit on a file without pragma).

use crate::rng::Rng;
use crate::scanner::{self, Form, Kind};
use std::ops::Range;

macro_rules! operators {
    ($($op:ident = $name:literal, $weight:literal;)*) => {
        /// A mutation operator.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op { $($op),* }

        impl Op {
            pub const ALL: &'static [Op] = &[$(Op::$op),*];
            const WEIGHTS: &'static [u32] = &[$($weight),*];

            pub fn name(self) -> &'static str {
                match self { $(Op::$op => $name),* }
            }
        }
    };
}

operators! {
    ByteInsert = "byte_insert", 4;
    ByteDelete = "byte_delete", 4;
    ByteFlip = "byte_flip", 4;
    TokenDuplicate = "token_duplicate", 3;
    TokenDelete = "token_delete", 3;
    TokenSwap = "token_swap", 3;
    TokenInsertPunct = "token_insert_punct", 3;
    LineDuplicate = "line_duplicate", 2;
    LineDelete = "line_delete", 2;
    LineMove = "line_move", 2;
    Crossover = "crossover", 2;
    SpliceAnywhere = "splice_anywhere", 2;
    LaunchLiteral = "launch_literal", 3;
    LaunchMacro = "launch_macro", 3;
    LaunchDim3 = "launch_dim3", 3;
    LaunchStream = "launch_stream", 3;
    LaunchNestedParens = "launch_nested_parens", 2;
    PragmaMisspell = "pragma_misspell", 3;
    PragmaDropClause = "pragma_drop_clause", 3;
    PragmaDuplicateClause = "pragma_duplicate_clause", 2;
    PragmaAddClause = "pragma_add_clause", 4;
    PragmaClauseValue = "pragma_clause_value", 3;
    PragmaClauseComment = "pragma_clause_comment", 3;
    PragmaCommentBeforeHash = "pragma_comment_before_hash", 3;
    PragmaDigraph = "pragma_digraph", 3;
    PragmaSplice = "pragma_splice", 3;
    PragmaCommentBetween = "pragma_comment_between", 3;
    PragmaMove = "pragma_move", 2;
    PragmaOperator = "pragma_operator", 3;
    PragmaMacro = "pragma_macro", 3;
    RawStringPragma = "raw_string_pragma", 3;
    SplicedStringPragma = "spliced_string_pragma", 1;
    UnterminatedString = "unterminated_string", 2;
    UnterminatedChar = "unterminated_char", 1;
    UnterminatedRawString = "unterminated_raw_string", 2;
    UnterminatedComment = "unterminated_comment", 2;
    WrapIfdef = "wrap_ifdef", 2;
    WrapNamespace = "wrap_namespace", 2;
    DuplicateIntoNamespace = "duplicate_into_namespace", 2;
    LongLine = "long_line", 1;
    Crlf = "crlf", 2;
    NonUtf8 = "non_utf8", 2;
    RemovePragmas = "remove_pragmas", 2;
}

impl Op {
    /// A random operator, by weight; among `only` when not empty.
    pub fn random(rng: &mut Rng, only: &[Op]) -> Op {
        if only.is_empty() {
            Op::ALL[rng.weighted(Op::WEIGHTS)]
        } else {
            *rng.pick(only)
        }
    }

    /// Operators that keep a compiling file compiling (most of the time):
    /// for the nvcc sample, whose cases must compile before dpopt runs.
    pub const BENIGN: &'static [Op] = &[
        Op::PragmaAddClause,
        Op::PragmaClauseValue,
        Op::PragmaDropClause,
        Op::PragmaDuplicateClause,
        Op::PragmaClauseComment,
        Op::PragmaCommentBeforeHash,
        Op::PragmaCommentBetween,
        Op::PragmaDigraph,
        Op::PragmaSplice,
        Op::PragmaOperator,
        Op::PragmaMacro,
        Op::LaunchStream,
        Op::LaunchDim3,
        Op::LaunchMacro,
        Op::Crlf,
        Op::WrapIfdef,
        Op::DuplicateIntoNamespace,
        Op::RawStringPragma,
        Op::SplicedStringPragma,
        Op::RemovePragmas,
    ];

    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// Apply the operator; `donor` is another corpus file (for crossover).
    pub fn apply(self, input: &[u8], donor: &[u8], rng: &mut Rng) -> Option<Vec<u8>> {
        let mut m = Mutator {
            src: input,
            rng,
            donor,
        };
        let out = match self {
            Op::ByteInsert => m.byte_insert(),
            Op::ByteDelete => m.byte_delete(),
            Op::ByteFlip => m.byte_flip(),
            Op::TokenDuplicate => m.token_duplicate(),
            Op::TokenDelete => m.token_delete(),
            Op::TokenSwap => m.token_swap(),
            Op::TokenInsertPunct => m.token_insert_punct(),
            Op::LineDuplicate => m.line_duplicate(),
            Op::LineDelete => m.line_delete(),
            Op::LineMove => m.line_move(),
            Op::Crossover => m.crossover(),
            Op::SpliceAnywhere => m.splice_anywhere(),
            Op::LaunchLiteral => m.launch_literal(),
            Op::LaunchMacro => m.launch_macro(),
            Op::LaunchDim3 => m.launch_dim3(),
            Op::LaunchStream => m.launch_stream(),
            Op::LaunchNestedParens => m.launch_nested_parens(),
            Op::PragmaMisspell => m.pragma_misspell(),
            Op::PragmaDropClause => m.pragma_drop_clause(),
            Op::PragmaDuplicateClause => m.pragma_duplicate_clause(),
            Op::PragmaAddClause => m.pragma_add_clause(),
            Op::PragmaClauseValue => m.pragma_clause_value(),
            Op::PragmaClauseComment => m.pragma_clause_comment(),
            Op::PragmaCommentBeforeHash => m.pragma_comment_before_hash(),
            Op::PragmaDigraph => m.pragma_digraph(),
            Op::PragmaSplice => m.pragma_splice(),
            Op::PragmaCommentBetween => m.pragma_comment_between(),
            Op::PragmaMove => m.pragma_move(),
            Op::PragmaOperator => m.pragma_operator(),
            Op::PragmaMacro => m.pragma_macro(),
            Op::RawStringPragma => m.raw_string_pragma(),
            Op::SplicedStringPragma => m.spliced_string_pragma(),
            Op::UnterminatedString => m.insert_somewhere_in_code(&["\"", "\"abc", "L\"x"]),
            Op::UnterminatedChar => m.insert_somewhere_in_code(&["'", "'a", "u8'"]),
            Op::UnterminatedRawString => {
                m.insert_somewhere_in_code(&["R\"(", "R\"xyz(a)\"", "u8R\"d("])
            }
            Op::UnterminatedComment => m.insert_somewhere_in_code(&["/*", "/* open", "/*/"]),
            Op::WrapIfdef => m.wrap_ifdef(),
            Op::WrapNamespace => m.wrap_namespace(),
            Op::DuplicateIntoNamespace => m.duplicate_into_namespace(),
            Op::LongLine => m.long_line(),
            Op::Crlf => m.crlf(),
            Op::NonUtf8 => m.non_utf8(),
            Op::RemovePragmas => remove_pragmas(input),
        }?;
        (out != input).then_some(out)
    }
}

/// The file with every `#pragma dp` (all forms) removed: the result must
/// pass through dpopt byte for byte.
pub fn remove_pragmas(input: &[u8]) -> Option<Vec<u8>> {
    let scan = scanner::scan(input);
    if scan.pragmas.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(input.len());
    let mut pos = 0;
    for p in &scan.pragmas {
        if p.span.start < pos {
            continue;
        }
        out.extend_from_slice(&input[pos..p.span.start]);
        pos = p.span.end;
    }
    out.extend_from_slice(&input[pos..]);
    Some(out)
}

fn replace(src: &[u8], range: Range<usize>, with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() + with.len());
    out.extend_from_slice(&src[..range.start]);
    out.extend_from_slice(with);
    out.extend_from_slice(&src[range.end..]);
    out
}

fn insert(src: &[u8], at: usize, what: &[u8]) -> Vec<u8> {
    replace(src, at..at, what)
}

/// Byte ranges of the lines, newline included.
fn lines(src: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in src.iter().enumerate() {
        if b == b'\n' {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < src.len() {
        out.push(start..src.len());
    }
    out
}

fn line_start(src: &[u8], at: usize) -> usize {
    src[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1)
}

fn line_end(src: &[u8], at: usize) -> usize {
    src[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |p| at + p + 1)
}

/// The newline the file mostly uses.
fn newline(src: &[u8]) -> &'static [u8] {
    let crlf = src.windows(2).filter(|w| w == b"\r\n").count();
    let lf = src.iter().filter(|&&b| b == b'\n').count();
    if crlf * 2 > lf {
        b"\r\n"
    } else {
        b"\n"
    }
}

/// A launch `<<<config>>>`: the config range and its top-level arguments.
struct Launch {
    /// Offset of the line start of the statement (above a pragma line that
    /// directly precedes it).
    statement: usize,
    config: Range<usize>,
    args: Vec<Range<usize>>,
    /// A `#pragma dp` line directly precedes it.
    pragma: bool,
}

fn launches(src: &[u8]) -> Vec<Launch> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = scanner::find(&src[from..], b"<<<") {
        let open = from + p + 3;
        let Some(q) = scanner::find(&src[open..], b">>>") else {
            break;
        };
        let config = open..open + q;
        from = config.end + 3;
        let mut args = Vec::new();
        let mut depth = 0i32;
        let mut start = config.start;
        for i in config.clone() {
            match src[i] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    args.push(start..i);
                    start = i + 1;
                }
                _ => {}
            }
        }
        args.push(start..config.end);
        let mut statement = line_start(src, config.start);
        let line = statement;
        while statement > 0 {
            let prev = line_start(src, statement - 1);
            let text = String::from_utf8_lossy(&src[prev..statement]);
            if text.contains("pragma") || text.trim_end().ends_with('\\') {
                statement = prev;
            } else {
                break;
            }
        }
        out.push(Launch {
            pragma: statement < line,
            statement,
            config,
            args,
        });
    }
    out
}

/// A function definition at namespace level: the range from the start of
/// its head's line to the end of the line of its closing brace.
fn functions(src: &[u8]) -> Vec<Range<usize>> {
    let toks = scanner::significant_tokens(src);
    let mut out = Vec::new();
    // Brace stack: true for a namespace (or extern "C") brace.
    let mut stack: Vec<bool> = Vec::new();
    let mut head: Option<usize> = None;
    let mut i = 0;
    while i < toks.len() {
        let (kind, r) = &toks[i];
        let text = &src[r.clone()];
        // (Comparing with the previous token keeps this linear on long lines.)
        let before = if i == 0 { 0 } else { toks[i - 1].1.end };
        let gap = &src[before..r.start];
        let at_line_start = if i == 0 {
            gap.iter().all(|b| b.is_ascii_whitespace())
        } else {
            gap.contains(&b'\n')
        };
        if text == b"#" && at_line_start {
            // Skip the directive line(s).
            let end = line_end(src, r.start);
            while i < toks.len() && toks[i].1.start < end {
                i += 1;
            }
            head = None;
            continue;
        }
        let in_namespace_scope = stack.iter().all(|&ns| ns);
        match text {
            b";" if in_namespace_scope => head = None,
            b"{" => {
                let head_tokens = head.map_or(&toks[i..i], |h| &toks[h..i]);
                let words: Vec<&[u8]> = head_tokens.iter().map(|(_, r)| &src[r.clone()]).collect();
                let namespace = words.contains(&&b"namespace"[..])
                    || (words.len() == 2 && words[0] == b"extern");
                let is_function = in_namespace_scope
                    && !namespace
                    && words.contains(&&b"("[..])
                    && !words
                        .iter()
                        .any(|w| matches!(*w, b"struct" | b"class" | b"union" | b"enum" | b"="));
                if is_function {
                    // Find the matching brace.
                    let mut depth = 0;
                    let mut j = i;
                    while j < toks.len() {
                        match &src[toks[j].1.clone()] {
                            b"{" => depth += 1,
                            b"}" => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    if j < toks.len() {
                        let start = line_start(src, toks[head.unwrap_or(i)].1.start);
                        out.push(start..line_end(src, toks[j].1.start));
                        i = j + 1;
                        head = None;
                        continue;
                    }
                    return out;
                }
                stack.push(namespace);
                head = None;
            }
            b"}" => {
                stack.pop();
                head = None;
            }
            _ if in_namespace_scope && head.is_none() && *kind != Kind::Other => head = Some(i),
            _ => {}
        }
        i += 1;
    }
    out
}

/// The `#`-form pragma directives: their spans (`#` to end of line).
fn pragma_directives(src: &[u8]) -> Vec<Range<usize>> {
    scanner::scan(src)
        .pragmas
        .into_iter()
        .filter(|p| matches!(p.form, Form::Hash | Form::Digraph))
        .map(|p| p.span)
        .collect()
}

/// A clause of a pragma: name range and, if any, its parenthesised
/// argument range (parentheses included).
struct Clause {
    name: Range<usize>,
    args: Option<Range<usize>>,
}

/// The clauses of the pragma directive at `span` (a plain textual parse).
fn clauses(src: &[u8], span: &Range<usize>) -> Vec<Clause> {
    let text = &src[span.clone()];
    let Some(dp) = scanner::find(text, b"dp") else {
        return Vec::new();
    };
    let mut i = span.start + dp + 2;
    let mut out = Vec::new();
    while i < span.end {
        let c = src[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < span.end && (src[i].is_ascii_alphanumeric() || src[i] == b'_') {
                i += 1;
            }
            let name = start..i;
            let mut j = i;
            while j < span.end && src[j] == b' ' {
                j += 1;
            }
            let mut args = None;
            if j < span.end && src[j] == b'(' {
                let mut depth = 0;
                let mut k = j;
                while k < span.end {
                    match src[k] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                let end = (k + 1).min(span.end);
                args = Some(j..end);
                i = end;
            }
            out.push(Clause { name, args });
        } else {
            i += 1;
        }
    }
    out
}

const PUNCTS: &[&str] = &[
    "<<<", ">>>", "#", "%:", "<%", "%>", "<:", ":>", "::", "(", ")", "{", "}", "[", "]", ";", ",",
    "\"", "'", "\\", "/*", "*/", "//", "<", ">", "...", "->", "R\"(", "?", "@", "`", "##", "=",
];

const CLAUSES: &[&str] = &[
    "threshold(64)",
    "coarsen(4)",
    "child_threads(n)",
    "consldt(warp)",
    "consldt(block)",
    "consldt(multiblock, 4)",
    "consldt(grid)",
    "agg_threshold(8)",
    "work(n)",
    "buffer(default, 1024)",
    "buffer(halloc, 10)",
    "threads(128)",
    "blocks(4)",
    "bogus(1)",
    "threshold",
    "threshold()",
    "threshold(8",
    "coarsen(2) coarsen(2)",
];

const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2147483648",
    "99999999999999999999",
    "0x10",
    "1e3",
    "1'024",
    "N",
    "TH",
    "(8)",
    "8 + 8",
    "",
    " ",
    "threshold",
    "8,",
    "\"8\"",
    "'8'",
    "warp",
    "grid",
    "multiblock, 0",
];

struct Mutator<'a, 'r> {
    src: &'a [u8],
    rng: &'r mut Rng,
    donor: &'a [u8],
}

impl Mutator<'_, '_> {
    fn pos(&mut self) -> usize {
        self.rng.below(self.src.len() + 1)
    }

    fn line_start_at_random(&mut self) -> usize {
        let ls = lines(self.src);
        if ls.is_empty() {
            return 0;
        }
        ls[self.rng.below(ls.len())].start
    }

    fn byte_insert(&mut self) -> Option<Vec<u8>> {
        const INTERESTING: &[u8] = b"\n\r\\#\"'/*(){}[]<>;,%:\0 \t";
        let b = if self.rng.chance(3, 4) {
            *self.rng.pick(INTERESTING)
        } else {
            self.rng.next_u64() as u8
        };
        let at = self.pos();
        Some(insert(self.src, at, &[b]))
    }

    fn byte_delete(&mut self) -> Option<Vec<u8>> {
        if self.src.is_empty() {
            return None;
        }
        let at = self.rng.below(self.src.len());
        let len = self.rng.range(1, 8).min(self.src.len() - at);
        Some(replace(self.src, at..at + len, b""))
    }

    fn byte_flip(&mut self) -> Option<Vec<u8>> {
        if self.src.is_empty() {
            return None;
        }
        let at = self.rng.below(self.src.len());
        let mut out = self.src.to_vec();
        out[at] ^= 1 << self.rng.below(8);
        Some(out)
    }

    fn random_token(&mut self) -> Option<Range<usize>> {
        let toks = scanner::significant_tokens(self.src);
        if toks.is_empty() {
            return None;
        }
        Some(toks[self.rng.below(toks.len())].1.clone())
    }

    fn token_duplicate(&mut self) -> Option<Vec<u8>> {
        let t = self.random_token()?;
        let copy = self.src[t.clone()].to_vec();
        Some(insert(self.src, t.end, &copy))
    }

    fn token_delete(&mut self) -> Option<Vec<u8>> {
        let t = self.random_token()?;
        Some(replace(self.src, t, b""))
    }

    fn token_swap(&mut self) -> Option<Vec<u8>> {
        let toks = scanner::significant_tokens(self.src);
        if toks.len() < 2 {
            return None;
        }
        let i = self.rng.below(toks.len() - 1);
        let j = if self.rng.chance(1, 2) {
            i + 1
        } else {
            self.rng.range(i + 1, toks.len() - 1)
        };
        let (a, b) = (toks[i].1.clone(), toks[j].1.clone());
        let mut out = Vec::with_capacity(self.src.len());
        out.extend_from_slice(&self.src[..a.start]);
        out.extend_from_slice(&self.src[b.clone()]);
        out.extend_from_slice(&self.src[a.end..b.start]);
        out.extend_from_slice(&self.src[a]);
        out.extend_from_slice(&self.src[b.end..]);
        Some(out)
    }

    fn token_insert_punct(&mut self) -> Option<Vec<u8>> {
        let p = *self.rng.pick(PUNCTS);
        let at = match self.random_token() {
            Some(t) if self.rng.chance(3, 4) => {
                if self.rng.chance(1, 2) {
                    t.start
                } else {
                    t.end
                }
            }
            _ => self.pos(),
        };
        Some(insert(self.src, at, p.as_bytes()))
    }

    fn random_line(&mut self) -> Option<Range<usize>> {
        let ls = lines(self.src);
        if ls.is_empty() {
            return None;
        }
        Some(ls[self.rng.below(ls.len())].clone())
    }

    fn line_duplicate(&mut self) -> Option<Vec<u8>> {
        let l = self.random_line()?;
        let copy = self.src[l.clone()].to_vec();
        Some(insert(self.src, l.end, &copy))
    }

    fn line_delete(&mut self) -> Option<Vec<u8>> {
        let l = self.random_line()?;
        Some(replace(self.src, l, b""))
    }

    fn line_move(&mut self) -> Option<Vec<u8>> {
        let l = self.random_line()?;
        let text = self.src[l.clone()].to_vec();
        let rest = replace(self.src, l, b"");
        let ls = lines(&rest);
        let at = if ls.is_empty() {
            0
        } else {
            ls[self.rng.below(ls.len())].start
        };
        Some(insert(&rest, at, &text))
    }

    fn crossover(&mut self) -> Option<Vec<u8>> {
        let donor = lines(self.donor);
        if donor.is_empty() {
            return None;
        }
        let first = self.rng.below(donor.len());
        let last = (first + self.rng.range(1, 40)).min(donor.len()) - 1;
        let chunk = self.donor[donor[first].start..donor[last].end].to_vec();
        let at = self.line_start_at_random();
        Some(insert(self.src, at, &chunk))
    }

    fn splice_anywhere(&mut self) -> Option<Vec<u8>> {
        const SPLICES: &[&[u8]] = &[b"\\\n", b"\\\r\n", b"\\ \n", b"\\\t\n", b"\\\n\\\n"];
        let splice = *self.rng.pick(SPLICES);
        // Most often inside or next to a token of a pragma line.
        let pragmas = pragma_directives(self.src);
        let at = if !pragmas.is_empty() && self.rng.chance(2, 3) {
            let p = self.rng.pick(&pragmas).clone();
            self.rng.range(p.start, p.end)
        } else {
            self.pos()
        };
        Some(insert(self.src, at, splice))
    }

    /// A launch, most often one with a pragma.
    fn random_launch(&mut self) -> Option<Launch> {
        let mut ls = launches(self.src);
        if ls.iter().any(|l| l.pragma) && self.rng.chance(3, 4) {
            ls.retain(|l| l.pragma);
        }
        if ls.is_empty() {
            return None;
        }
        let i = self.rng.below(ls.len());
        Some(ls.swap_remove(i))
    }

    fn launch_literal(&mut self) -> Option<Vec<u8>> {
        const LITERALS: &[&str] = &[
            "1",
            "32",
            "1024",
            "0",
            "-1",
            "0x40",
            "1'024",
            "32u",
            "(1 << 10)",
            "2147483647",
            "n",
            "blockDim.x",
            "dim3(4, 2)",
            "{1, 2, 3}",
            "sizeof(int) * 32",
            "a ? 1 : 2",
        ];
        let l = self.random_launch()?;
        let arg = self.rng.pick(&l.args).clone();
        let lit = *self.rng.pick(LITERALS);
        Some(replace(self.src, arg, lit.as_bytes()))
    }

    fn launch_macro(&mut self) -> Option<Vec<u8>> {
        let l = self.random_launch()?;
        let arg = self.rng.pick(&l.args).clone();
        let text = String::from_utf8_lossy(&self.src[arg.clone()])
            .trim()
            .to_string();
        let k = self.rng.below(1000);
        let nl = String::from_utf8_lossy(newline(self.src)).to_string();
        let (define, usage) = if self.rng.chance(1, 2) {
            (
                format!("#define FUZZ_CFG_{k} {text}{nl}"),
                format!("FUZZ_CFG_{k}"),
            )
        } else {
            (
                format!("#define FUZZ_CFG_{k}(x) (x){nl}"),
                format!("FUZZ_CFG_{k}({text})"),
            )
        };
        let out = replace(self.src, arg, usage.as_bytes());
        let at = if self.rng.chance(1, 2) {
            0
        } else {
            l.statement
        };
        Some(insert(&out, at, define.as_bytes()))
    }

    fn launch_dim3(&mut self) -> Option<Vec<u8>> {
        let l = self.random_launch()?;
        let which = self.rng.below(l.args.len().min(2));
        let arg = l.args[which].clone();
        let text = String::from_utf8_lossy(&self.src[arg.clone()])
            .trim()
            .to_string();
        let name = format!("fuzz_dim{}", self.rng.below(1000));
        let nl = String::from_utf8_lossy(newline(self.src)).to_string();
        let decl = match self.rng.below(4) {
            0 => format!("  dim3 {name}({text});{nl}"),
            1 => format!("  const dim3 {name} = dim3({text});{nl}"),
            2 => format!("  dim3 {name}{{({text}), 1, 1}};{nl}"),
            _ => format!("  auto {name} = {text};{nl}"),
        };
        let out = replace(self.src, arg, name.as_bytes());
        Some(insert(&out, l.statement, decl.as_bytes()))
    }

    fn launch_stream(&mut self) -> Option<Vec<u8>> {
        const STREAMS: &[&str] = &[
            "0",
            "NULL",
            "nullptr",
            "s",
            "cudaStreamFireAndForget",
            "cudaStreamTailLaunch",
            "(cudaStream_t)0",
        ];
        let l = self.random_launch()?;
        let s = *self.rng.pick(STREAMS);
        let (range, text) = match l.args.len() {
            1 | 2 => (l.config.end..l.config.end, format!(", 0, {s}")),
            3 => (l.config.end..l.config.end, format!(", {s}")),
            _ => (l.args[3].clone(), format!(" {s}")),
        };
        Some(replace(self.src, range, text.as_bytes()))
    }

    fn launch_nested_parens(&mut self) -> Option<Vec<u8>> {
        const DEPTHS: &[usize] = &[1, 2, 3, 8, 64, 500, 2000, 10_000, 20_000];
        const WEIGHTS: &[u32] = &[4, 4, 2, 2, 2, 2, 2, 3, 1];
        let l = self.random_launch()?;
        let arg = self.rng.pick(&l.args).clone();
        let depth = DEPTHS[self.rng.weighted(WEIGHTS)];
        let mut text = "(".repeat(depth).into_bytes();
        text.extend_from_slice(&self.src[arg.clone()]);
        text.extend(vec![b')'; depth]);
        Some(replace(self.src, arg, &text))
    }

    fn random_pragma(&mut self) -> Option<Range<usize>> {
        let ps = pragma_directives(self.src);
        if ps.is_empty() {
            return None;
        }
        Some(ps[self.rng.below(ps.len())].clone())
    }

    fn random_clause(&mut self) -> Option<(Range<usize>, Clause)> {
        let p = self.random_pragma()?;
        let mut cs = clauses(self.src, &p);
        if cs.is_empty() {
            return None;
        }
        let i = self.rng.below(cs.len());
        Some((p, cs.swap_remove(i)))
    }

    fn pragma_misspell(&mut self) -> Option<Vec<u8>> {
        let (_, c) = self.random_clause()?;
        let mut name = self.src[c.name.clone()].to_vec();
        let i = self.rng.below(name.len());
        match self.rng.below(4) {
            0 => {
                name.remove(i);
            }
            1 if name.len() > 1 => {
                let j = (i + 1) % name.len();
                name.swap(i, j);
            }
            2 => {
                let c = name[i];
                name.insert(i, c);
            }
            _ => name[i] = b'a' + self.rng.below(26) as u8,
        }
        Some(replace(self.src, c.name, &name))
    }

    fn pragma_drop_clause(&mut self) -> Option<Vec<u8>> {
        let (_, c) = self.random_clause()?;
        let end = c.args.map_or(c.name.end, |a| a.end);
        Some(replace(self.src, c.name.start..end, b""))
    }

    fn pragma_duplicate_clause(&mut self) -> Option<Vec<u8>> {
        let (_, c) = self.random_clause()?;
        let end = c.args.map_or(c.name.end, |a| a.end);
        let mut copy = b" ".to_vec();
        copy.extend_from_slice(&self.src[c.name.start..end]);
        Some(insert(self.src, end, &copy))
    }

    fn pragma_add_clause(&mut self) -> Option<Vec<u8>> {
        let p = self.random_pragma()?;
        let clause = *self.rng.pick(CLAUSES);
        Some(insert(self.src, p.end, format!(" {clause}").as_bytes()))
    }

    fn pragma_clause_value(&mut self) -> Option<Vec<u8>> {
        let (_, c) = self.random_clause()?;
        let args = c.args?;
        let value = *self.rng.pick(VALUES);
        let inner = args.start + 1..(args.end - 1).max(args.start + 1);
        Some(replace(self.src, inner, value.as_bytes()))
    }

    fn pragma_clause_comment(&mut self) -> Option<Vec<u8>> {
        const COMMENTS: &[&str] = &["/* c */ ", "/**/", "/* a */ /* b */", " // tail"];
        let (p, c) = self.random_clause()?;
        let comment = *self.rng.pick(COMMENTS);
        if comment.starts_with(" //") {
            return Some(insert(self.src, p.end, comment.as_bytes()));
        }
        let at = match (&c.args, self.rng.below(3)) {
            (Some(a), 0) => a.start + 1,
            (Some(a), 1) => a.end.saturating_sub(1).max(a.start + 1),
            _ => c.name.end,
        };
        Some(insert(self.src, at, comment.as_bytes()))
    }

    fn pragma_comment_before_hash(&mut self) -> Option<Vec<u8>> {
        const COMMENTS: &[&str] = &["/* a */ ", "/**/", "/* multi\n   line */ ", "  /* x */\t"];
        let p = self.random_pragma()?;
        let comment = *self.rng.pick(COMMENTS);
        Some(insert(self.src, p.start, comment.as_bytes()))
    }

    fn pragma_digraph(&mut self) -> Option<Vec<u8>> {
        let p = self.random_pragma()?;
        if self.src[p.start] != b'#' {
            return None;
        }
        Some(replace(self.src, p.start..p.start + 1, b"%:"))
    }

    fn pragma_splice(&mut self) -> Option<Vec<u8>> {
        let p = self.random_pragma()?;
        const SPLICES: &[&[u8]] = &[b"\\\n", b"\\\r\n", b"\\ \n"];
        let splice = *self.rng.pick(SPLICES);
        // After the `#`, inside `pragma`, before `dp`, or anywhere in it.
        let text = &self.src[p.clone()];
        let word = scanner::find(text, b"pragma").map_or(1, |w| w + self.rng.range(0, 6));
        let at = match self.rng.below(4) {
            0 => p.start + 1,
            1 => p.start + word,
            2 => p.start + scanner::find(text, b"dp").unwrap_or(1),
            _ => self.rng.range(p.start + 1, p.end),
        };
        Some(insert(self.src, at.min(p.end), splice))
    }

    fn pragma_comment_between(&mut self) -> Option<Vec<u8>> {
        let p = self.random_pragma()?;
        let text = &self.src[p.clone()];
        const COMMENTS: &[&[u8]] = &[b"/**/", b" /* x */ ", b"/*\n*/"];
        let comment = *self.rng.pick(COMMENTS);
        let after_hash = p.start + 1;
        let pragma_end = scanner::find(text, b"pragma").map_or(after_hash, |w| p.start + w + 6);
        let at = match self.rng.below(3) {
            0 => after_hash,
            1 => pragma_end,
            _ => p.start + scanner::find(text, b"dp").map_or(1, |d| d + 2),
        };
        // A comment right after `pragma` must keep a blank before `dp`.
        let mut c = comment.to_vec();
        if at == pragma_end && !c.starts_with(b" ") {
            c.insert(0, b' ');
        }
        Some(insert(self.src, at, &c))
    }

    fn pragma_move(&mut self) -> Option<Vec<u8>> {
        let p = self.random_pragma()?;
        let line = line_start(self.src, p.start)..line_end(self.src, p.end.saturating_sub(1));
        let text = self.src[line.clone()].to_vec();
        let rest = replace(self.src, line, b"");
        let target = {
            let ls = launches(&rest);
            if !ls.is_empty() && self.rng.chance(1, 2) {
                line_start(&rest, self.rng.pick(&ls).config.start)
            } else {
                let ls = lines(&rest);
                if ls.is_empty() {
                    0
                } else {
                    ls[self.rng.below(ls.len())].start
                }
            }
        };
        Some(insert(&rest, target, &text))
    }

    /// The clauses of a pragma as one line of text, for `_Pragma`.
    fn pragma_clauses_text(&self, p: &Range<usize>) -> String {
        let text = &self.src[p.clone()];
        let after = scanner::find(text, b"dp").map_or(text.len(), |d| d + 2);
        let mut s = String::from_utf8_lossy(&text[after..]).to_string();
        for splice in ["\\\r\n", "\\\n"] {
            s = s.replace(splice, " ");
        }
        s.replace(['\r', '\n'], " ")
    }

    fn pragma_operator(&mut self) -> Option<Vec<u8>> {
        let p = self.random_pragma()?;
        let clauses = self.pragma_clauses_text(&p);
        let escaped = clauses.replace('\\', "\\\\").replace('"', "\\\"");
        let text = match self.rng.below(3) {
            0 => format!("_Pragma(\"dp{escaped}\")"),
            1 => format!("_Pragma ( \"dp{escaped}\" )"),
            _ => format!("_Pragma(L\"dp{escaped}\")"),
        };
        Some(replace(self.src, p, text.as_bytes()))
    }

    fn pragma_macro(&mut self) -> Option<Vec<u8>> {
        let p = self.random_pragma()?;
        let clauses = self.pragma_clauses_text(&p);
        let nl = String::from_utf8_lossy(newline(self.src)).to_string();
        let k = self.rng.below(1000);
        let (define, usage) = if self.rng.chance(1, 2) {
            let escaped = clauses.replace('\\', "\\\\").replace('"', "\\\"");
            (
                format!("#define FUZZ_DP_{k} _Pragma(\"dp{escaped}\"){nl}"),
                format!("FUZZ_DP_{k}"),
            )
        } else {
            (
                format!("#define FUZZ_DO_PRAGMA_{k}(x) _Pragma(#x){nl}"),
                format!("FUZZ_DO_PRAGMA_{k}(dp{clauses})"),
            )
        };
        let out = replace(self.src, p, usage.as_bytes());
        Some(insert(&out, 0, define.as_bytes()))
    }

    /// A line start before a function definition (namespace scope), or the
    /// start of the file.
    fn top_level_line(&mut self) -> usize {
        let fs = functions(self.src);
        if fs.is_empty() {
            0
        } else {
            self.rng.pick(&fs).start
        }
    }

    fn raw_string_pragma(&mut self) -> Option<Vec<u8>> {
        const PREFIXES: &[(&str, &str)] = &[
            ("", "char"),
            ("L", "wchar_t"),
            ("u8", "char"),
            ("u", "char16_t"),
            ("U", "char32_t"),
        ];
        let (prefix, ty) = *self.rng.pick(PREFIXES);
        let delim = *self.rng.pick(&["", "xyz", "a", "0123456789abcdef"]);
        let nl = String::from_utf8_lossy(newline(self.src)).to_string();
        let k = self.rng.below(1000);
        let text = format!(
            "static const {ty} *fuzz_raw_{k} = {prefix}R\"{delim}({nl}#pragma dp threshold(8){nl}  child<<<1, 1>>>();{nl}){delim}\";{nl}"
        );
        let at = self.top_level_line();
        Some(insert(self.src, at, text.as_bytes()))
    }

    fn spliced_string_pragma(&mut self) -> Option<Vec<u8>> {
        let nl = String::from_utf8_lossy(newline(self.src)).to_string();
        let k = self.rng.below(1000);
        let text =
            format!("static const char *fuzz_str_{k} = \"a\\{nl}#pragma dp threshold(8)\";{nl}");
        let at = self.top_level_line();
        Some(insert(self.src, at, text.as_bytes()))
    }

    /// Insert one of `pieces`, mostly inside a function body.
    fn insert_somewhere_in_code(&mut self, pieces: &[&str]) -> Option<Vec<u8>> {
        let piece = *self.rng.pick(pieces);
        let fs = functions(self.src);
        let at = if !fs.is_empty() && self.rng.chance(3, 4) {
            let f = self.rng.pick(&fs).clone();
            self.rng.range(f.start, f.end)
        } else {
            self.pos()
        };
        Some(insert(self.src, at, piece.as_bytes()))
    }

    fn random_function(&mut self) -> Option<Range<usize>> {
        let mut fs = functions(self.src);
        if fs.is_empty() {
            return None;
        }
        let i = self.rng.below(fs.len());
        Some(fs.swap_remove(i))
    }

    fn wrap_ifdef(&mut self) -> Option<Vec<u8>> {
        let f = self.random_function()?;
        let nl = String::from_utf8_lossy(newline(self.src)).to_string();
        let body = String::from_utf8_lossy(&self.src[f.clone()]).to_string();
        let body = if body.ends_with('\n') {
            body
        } else {
            format!("{body}{nl}")
        };
        let cond = *self.rng.pick(&[
            "#ifdef FUZZ_X",
            "#ifndef FUZZ_X",
            "#if 0",
            "#if 1",
            "#if FUZZ_LEVEL > 2",
        ]);
        let text = format!("{cond}{nl}{body}#else{nl}{body}#endif{nl}");
        Some(replace(self.src, f, text.as_bytes()))
    }

    fn wrap_namespace(&mut self) -> Option<Vec<u8>> {
        let f = self.random_function()?;
        let nl = String::from_utf8_lossy(newline(self.src)).to_string();
        let mut text = format!("namespace fuzz_ns {{{nl}").into_bytes();
        text.extend_from_slice(&self.src[f.clone()]);
        text.extend_from_slice(format!("}}  // namespace fuzz_ns{nl}").as_bytes());
        Some(replace(self.src, f, &text))
    }

    fn duplicate_into_namespace(&mut self) -> Option<Vec<u8>> {
        let f = self.random_function()?;
        let nl = String::from_utf8_lossy(newline(self.src)).to_string();
        let mut text = format!("namespace fuzz_dup {{{nl}").into_bytes();
        text.extend_from_slice(&self.src[f.clone()]);
        text.extend_from_slice(format!("}}  // namespace fuzz_dup{nl}").as_bytes());
        Some(insert(self.src, f.end, &text))
    }

    fn long_line(&mut self) -> Option<Vec<u8>> {
        const ERRORS: &[&str] = &[
            ")",
            "(",
            "\"",
            "'",
            "}",
            "{",
            "]",
            "\u{e9}",
            "\\",
            " #pragma dp x ",
            "/*",
            "*/",
            "<<<",
        ];
        let len = self.rng.range(60_000, 140_000);
        let mut line = String::with_capacity(len + 64);
        line.push_str("static const int fuzz_table[] = {");
        let mut i = 0u32;
        while line.len() < len {
            line.push_str(&format!("{},", i % 1000));
            i += 1;
        }
        line.push_str("0};");
        let error = *self.rng.pick(ERRORS);
        let at = self.rng.range(line.len() / 2, line.len() - 4);
        let at = (0..=at)
            .rev()
            .find(|&a| line.is_char_boundary(a))
            .unwrap_or(0);
        line.insert_str(at, error);
        let nl = String::from_utf8_lossy(newline(self.src)).to_string();
        line.push_str(&nl);
        let at = match self.rng.below(3) {
            0 => self.top_level_line(),
            1 => self.line_start_at_random(),
            _ => {
                // On a pragma line: a long trailing comment or clause list.
                if let Some(p) = self.random_pragma() {
                    let tail = format!(" /* {} */", "x".repeat(len));
                    return Some(insert(self.src, p.end, tail.as_bytes()));
                }
                0
            }
        };
        Some(insert(self.src, at, line.as_bytes()))
    }

    fn crlf(&mut self) -> Option<Vec<u8>> {
        let mode = self.rng.below(3);
        let mut out = Vec::with_capacity(self.src.len() * 2);
        let mut prev = 0u8;
        for &b in self.src {
            if b == b'\n' && prev != b'\r' {
                match mode {
                    0 => out.extend_from_slice(b"\r\n"),
                    1 if self.rng.chance(1, 2) => out.extend_from_slice(b"\r\n"),
                    2 => out.push(b'\r'),
                    _ => out.push(b),
                }
            } else {
                out.push(b);
            }
            prev = b;
        }
        Some(out)
    }

    fn non_utf8(&mut self) -> Option<Vec<u8>> {
        const BYTES: &[&[u8]] = &[
            b"\xe9",
            b"\xff",
            b"\xc3",
            b"\x80",
            b"\xc0\x80",
            b"\xed\xa0\x80",
            b"caf\xe9",
            b"\xc3\xa9",
        ];
        let bytes = *self.rng.pick(BYTES);
        let at = match self.random_pragma() {
            Some(p) if self.rng.chance(1, 3) => self.rng.range(p.start, p.end),
            _ => self.pos(),
        };
        Some(insert(self.src, at, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "#include <a.h>\nnamespace ns {\n__global__ void child(int *a, int n) {\n  a[0] = n;\n}\n}\n__global__ void parent(int *a, int n) {\n#pragma dp threshold(8) coarsen(2)\n  ns::child<<<(n + 31) / 32, 32>>>(a, n);\n}\n";

    #[test]
    fn finds_functions_launches_and_clauses() {
        let src = SAMPLE.as_bytes();
        let fs = functions(src);
        assert_eq!(fs.len(), 2);
        assert!(String::from_utf8_lossy(&src[fs[0].clone()]).starts_with("__global__ void child"));
        let ls = launches(src);
        assert_eq!(ls.len(), 1);
        assert_eq!(ls[0].args.len(), 2);
        assert_eq!(&src[ls[0].args[1].clone()], b" 32");
        assert!(String::from_utf8_lossy(&src[ls[0].statement..]).starts_with("#pragma dp"));
        let ps = pragma_directives(src);
        let cs = clauses(src, &ps[0]);
        let names: Vec<&[u8]> = cs.iter().map(|c| &src[c.name.clone()]).collect();
        assert_eq!(names, [&b"threshold"[..], b"coarsen"]);
        assert_eq!(&src[cs[0].args.clone().unwrap()], b"(8)");
    }

    #[test]
    fn every_operator_applies_and_pragma_forms_are_seen() {
        let mut rng = Rng::new(3);
        for &op in Op::ALL {
            let mut applied = false;
            for _ in 0..20 {
                if op
                    .apply(SAMPLE.as_bytes(), SAMPLE.as_bytes(), &mut rng)
                    .is_some()
                {
                    applied = true;
                    break;
                }
            }
            assert!(applied, "{} never applied", op.name());
        }
        for op in [Op::PragmaOperator, Op::PragmaMacro, Op::PragmaDigraph] {
            let out = op.apply(SAMPLE.as_bytes(), b"", &mut rng).unwrap();
            assert_eq!(scanner::scan(&out).certain(), 1, "{}", op.name());
        }
        let out = remove_pragmas(SAMPLE.as_bytes()).unwrap();
        assert_eq!(scanner::scan(&out).total(), 0);
    }
}
