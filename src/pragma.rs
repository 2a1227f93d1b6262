//! Stage 1b: read one `#pragma dp` directive into clauses and validate them.

use crate::diagnostic::{suggest, Diagnostic, DiagnosticKind};
use crate::grammar::{DpGrammar, Rule};
use crate::phases::{directive_text, is_dp_pragma_text, LogicalText};
use crate::plan::{Aggregation, Kernel, Site};
use crate::source::Span;
use crate::token::is_identifier;
use pest::Parser;

/// A positive integer given in a clause: a literal or a macro name whose
/// value nvcc will know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Literal(u64),
    Macro(String),
}

/// A value in a template's context is its source text.
impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_source())
    }
}

impl Value {
    /// The value as C source text.
    pub fn to_source(&self) -> String {
        match self {
            Value::Literal(n) => n.to_string(),
            Value::Macro(m) => m.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    Warp,
    Block,
    MultiBlock,
    Grid,
}

impl Granularity {
    pub const ALL: [Granularity; 4] = [
        Granularity::Warp,
        Granularity::Block,
        Granularity::MultiBlock,
        Granularity::Grid,
    ];

    /// The granularity as `consldt(...)` spells it.
    pub const fn spelling(self) -> &'static str {
        match self {
            Granularity::Warp => "warp",
            Granularity::Block => "block",
            Granularity::MultiBlock => "multiblock",
            Granularity::Grid => "grid",
        }
    }
}

/// The clause a tuning clause is meaningless without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Threshold,
    Aggregation,
}

impl Needs {
    /// The clause needed.
    pub const fn clause(self) -> ClauseName {
        match self {
            Needs::Threshold => ClauseName::Threshold,
            Needs::Aggregation => ClauseName::Aggregate,
        }
    }

    /// The error for `clause` given without it, and its label.
    fn missing(self, clause: &str) -> (DiagnosticKind, &'static str) {
        let clause = clause.to_string();
        match self {
            Needs::Threshold => (
                DiagnosticKind::NeedsThreshold { clause },
                "the count is only compared with a threshold",
            ),
            Needs::Aggregation => (
                DiagnosticKind::NeedsAggregation { clause },
                "aggregation tuning without aggregation",
            ),
        }
    }
}

/// What a clause's arguments are, and for a positive integer where its
/// value lands in the plan. The parse follows it (`clause_value`), so a
/// clause of an existing kind needs no parsing code of its own.
#[derive(Debug, Clone, Copy)]
pub enum Takes {
    /// One positive integer: a literal or a macro name (`N`). A literal
    /// above `max` is refused when parsed, a macro the file defines above it
    /// by the analyzer.
    Positive { max: Option<Limit>, lands: Lands },
    /// One expression, read by the analyzer (`child_threads`).
    Expression,
    /// Identifiers, read by the analyzer (`work`).
    Names,
    /// A granularity and, for `multiblock`, a group size (`consldt`).
    Granularity,
    /// A pool kind and sizes (`buffer`).
    Buffer,
    /// `warp`, `block` or `none`, read by the analyzer (`alloc`:
    /// `analyzer/alloc.rs`).
    AllocChoice,
    /// A kind of promotion and, for `aggregate`, the pool's blocks
    /// (`promote`); read by `analyzer/promote.rs` into a `PromoteSite`.
    Promotion,
    /// No arguments: a marker of a place in the code, not of a launch
    /// (`acquire`).
    Marker,
    /// No arguments, or one positive integer (`floor`, `floor(N)`): the
    /// clause alone asks for a feature, which the analyzer sets up with its
    /// default; a value given lands as `lands` says.
    OptionalPositive { lands: Lands },
}

/// The largest value a clause takes, and the label that says why.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub max: u64,
    pub why: &'static str,
}

/// Where the value of a positive-integer clause goes in the plan; the
/// analyzer puts it there (`analyzer/sites.rs`, `analyzer/bounds.rs`)
/// without knowing the clause.
#[derive(Debug, Clone, Copy)]
pub enum Lands {
    /// A field of the site.
    Site(fn(&mut Site, Value)),
    /// A field of the site's aggregation (the clause needs `consldt`).
    Aggregation(fn(&mut Aggregation, Value)),
    /// One value per kernel: a field of the `plan::Kernel` of every kernel
    /// that runs the site (the parent, or the kernels that call it). Sites
    /// one kernel runs that state different values are an error
    /// (`DiagnosticKind::KernelClauseDiffers`), which says the kernel has one
    /// `what` and how to choose it (`advice`).
    Kernel {
        set: fn(&mut Kernel, Value),
        what: &'static str,
        advice: &'static str,
    },
}

/// Declares [`ClauseName`], the one table of the clauses dpopt knows: each
/// row gives the variant, the clause's spelling, its argument syntax (for
/// "write `name(args)`" help), the clause it needs beside it, what its
/// arguments are and where a value lands in the plan (`Takes`), and what it
/// means (the help that lists the clauses, the tests that keep
/// docs/PRAGMA.md's clause table complete). Parsing, names, validation and
/// the plan's values are derived from it.
macro_rules! clause_table {
    ($($variant:ident = $spelling:literal, args $syntax:literal, needs $needs:expr,
        takes $takes:expr, $meaning:literal;)*) => {
        /// Which clause: one variant per row of the clause table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ClauseName {
            $($variant,)*
        }

        impl ClauseName {
            /// Every clause, in the order the help lists them.
            pub const ALL: &'static [ClauseName] = &[$(ClauseName::$variant,)*];

            /// The clause as a pragma spells it.
            pub const fn spelling(self) -> &'static str {
                match self {
                    $(ClauseName::$variant => $spelling,)*
                }
            }

            /// Its arguments, as help writes them: `threshold(N)`.
            pub const fn syntax(self) -> &'static str {
                match self {
                    $(ClauseName::$variant => $syntax,)*
                }
            }

            /// The clause it is meaningless without, if any.
            pub const fn needs(self) -> Option<Needs> {
                match self {
                    $(ClauseName::$variant => $needs,)*
                }
            }

            /// What its arguments are and where its value lands.
            pub fn takes(self) -> Takes {
                match self {
                    $(ClauseName::$variant => $takes,)*
                }
            }

            /// What it does, in one line.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(ClauseName::$variant => $meaning,)*
                }
            }

            /// The code of the error for sites one kernel runs that state
            /// different values (`Lands::Kernel`).
            pub const fn differ_code(self) -> &'static str {
                match self {
                    $(ClauseName::$variant => concat!("dpopt::", $spelling, "_differ"),)*
                }
            }
        }
    };
}

clause_table! {
    Threshold = "threshold", args "N", needs None,
        takes Takes::Positive { max: None, lands: Lands::Site(|s, v| s.threshold = Some(v)) },
        "launch only when the child needs at least N threads; otherwise run them serially";
    Coarsen = "coarsen", args "F", needs None,
        takes Takes::Positive { max: None, lands: Lands::Site(|s, v| s.coarsen = Some(v)) },
        "each child block does the work of F original blocks";
    ChildThreads = "child_threads", args "EXPR", needs Some(Needs::Threshold),
        takes Takes::Expression,
        "the child's thread count, compared with the threshold";
    Aggregate = "consldt", args "warp|block|multiblock[, G]|grid", needs None,
        takes Takes::Granularity,
        "aggregate the child grids of many parents into one grid";
    AggThreshold = "agg_threshold", args "N", needs Some(Needs::Aggregation),
        takes Takes::Positive { max: None, lands: Lands::Aggregation(|a, v| a.agg_threshold = Some(v)) },
        "fewer than N launching threads launch their own children";
    Work = "work", args "v, ...", needs Some(Needs::Aggregation),
        takes Takes::Names,
        "the launch arguments that vary between parents";
    Buffer = "buffer", args "kind[, perBuffer[, total]]", needs Some(Needs::Aggregation),
        takes Takes::Buffer,
        "the records an aggregation pool holds";
    Threads = "threads", args "N", needs Some(Needs::Aggregation),
        takes Takes::Positive { max: None, lands: Lands::Aggregation(|a, v| a.threads = Some(v)) },
        "threads per block of every aggregated launch";
    Blocks = "blocks", args "N", needs Some(Needs::Aggregation),
        takes Takes::Positive { max: None, lands: Lands::Aggregation(|a, v| a.blocks = Some(v)) },
        "blocks of every aggregated launch, at most";
    ParentThreads = "parent_threads", args "N", needs None,
        takes Takes::Positive {
            // A block holds at most 1,024 threads on every architecture dpopt targets.
            max: Some(Limit { max: MAX_BLOCK_THREADS, why: "more threads than a block can have" }),
            lands: Lands::Kernel {
                set: |k, v| k.parent_threads = Some(v),
                what: "block size",
                advice: "state the largest it is launched with",
            },
        },
        "the parent kernel is launched with at most N threads per block (N <= 1024): its launch bounds";
    Alloc = "alloc", args "warp|block|none", needs None,
        takes Takes::AllocChoice,
        "one device-side malloc/cudaMalloc per warp or block for the pointers the parent allocates and passes to the launch, sliced per thread";
    Promote = "promote", args "basic|aggregate[, G]", needs None,
        takes Takes::Promotion,
        "a single-block kernel's launch of itself: the next step starts early and waits for this step's release";
    Acquire = "acquire", args "", needs None,
        takes Takes::Marker,
        "a marker in a promoted kernel: a promoted step runs the code before it before waiting for its predecessor";
    Floor = "floor", args "[N]", needs None,
        takes Takes::OptionalPositive {
            // The analyzer sets up the floor (`analyzer/sites.rs`) with the
            // default work list; `floor(N)` sizes it.
            lands: Lands::Site(|s, v| {
                if let Some(f) = &mut s.floor {
                    f.records = v;
                }
            }),
        },
        "host launches of the parent run a launch-free copy of it, then one drain grid over the large children (N: records in its work list)";
}

impl ClauseName {
    /// The clause spelt `text`, if there is one.
    pub fn from_spelling(text: &str) -> Option<ClauseName> {
        ClauseName::ALL
            .iter()
            .copied()
            .find(|c| c.spelling() == text)
    }

    /// Every clause's spelling, for "did you mean" and the help.
    pub fn spellings() -> Vec<&'static str> {
        ClauseName::ALL.iter().map(|c| c.spelling()).collect()
    }

    /// A marker takes no arguments: it marks a place in the code, not a
    /// launch (`acquire`).
    pub fn is_marker(self) -> bool {
        matches!(self.takes(), Takes::Marker)
    }

    /// Its arguments may be left out (`floor`).
    pub fn is_optional(self) -> bool {
        matches!(self.takes(), Takes::OptionalPositive { .. })
    }
}

/// How a promoted chain runs its steps (`promote(...)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Promotion {
    /// Each step is a grid of its own, launched by its predecessor at the
    /// predecessor's start (KLAP's basic promotion).
    Basic,
    /// The chain's head launches a pool of blocks that take the steps one
    /// after another (KLAP's promotion with aggregation).
    Aggregate,
}

impl Promotion {
    pub const ALL: [Promotion; 2] = [Promotion::Basic, Promotion::Aggregate];

    /// As `promote(...)` spells it.
    pub const fn spelling(self) -> &'static str {
        match self {
            Promotion::Basic => "basic",
            Promotion::Aggregate => "aggregate",
        }
    }
}

/// What `alloc(...)` asks for: the parent threads' allocations of the
/// launch's pointers aggregated per warp or block, or left as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum AllocChoice {
    Warp,
    Block,
    None,
}

impl AllocChoice {
    pub const ALL: [AllocChoice; 3] = [AllocChoice::Warp, AllocChoice::Block, AllocChoice::None];

    /// The choice as `alloc(...)` spells it.
    pub const fn spelling(self) -> &'static str {
        match self {
            AllocChoice::Warp => "warp",
            AllocChoice::Block => "block",
            AllocChoice::None => "none",
        }
    }

    fn from_spelling(text: &str) -> Option<AllocChoice> {
        AllocChoice::ALL.into_iter().find(|c| c.spelling() == text)
    }
}

/// A clause's arguments, read as its `Takes` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClauseValue {
    /// `Takes::Positive`: `threshold(N)`, `coarsen(F)`, ...
    Positive(Value),
    /// `Takes::Expression`: `child_threads(EXPR)`.
    Expression(String),
    /// `Takes::Names`: `work(v, ...)`.
    Names(Vec<String>),
    /// `Takes::Granularity`: `consldt(granularity[, G])`.
    Aggregate {
        granularity: Granularity,
        group: Option<Value>,
    },
    /// `Takes::Buffer`: `buffer(kind, sizes...)`.
    Buffer { kind: String, sizes: Vec<Value> },
    /// `Takes::AllocChoice`: `alloc(warp|block|none)`.
    Alloc(AllocChoice),
    /// `Takes::Promotion`: `promote(basic|aggregate[, G])`.
    Promote {
        kind: Promotion,
        pool: Option<Value>,
    },
    /// `Takes::Marker`: `acquire`.
    Marker,
    /// `Takes::OptionalPositive` given without its value: `floor`.
    Bare,
}

impl ClauseValue {
    /// The values the clause takes (not its expressions).
    pub fn values(&self) -> Vec<&Value> {
        match self {
            ClauseValue::Positive(v) => vec![v],
            ClauseValue::Aggregate { group, .. } => group.iter().collect(),
            ClauseValue::Buffer { sizes, .. } => sizes.iter().collect(),
            ClauseValue::Promote { pool, .. } => pool.iter().collect(),
            ClauseValue::Expression(_)
            | ClauseValue::Names(_)
            | ClauseValue::Marker
            | ClauseValue::Bare
            | ClauseValue::Alloc(_) => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    pub name: ClauseName,
    pub value: ClauseValue,
    /// Span of the whole clause in the source file.
    pub span: Span,
    /// The clause as the preprocessor reads it (no comments or splices),
    /// blanks collapsed.
    pub text: String,
}

/// A validated `#pragma dp` directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// Span of the directive in the source file.
    pub span: Span,
    pub clauses: Vec<Clause>,
}

impl Directive {
    /// The group size of `consldt(multiblock, G)`.
    pub fn group(&self) -> Option<&Value> {
        self.clauses.iter().find_map(|c| match &c.value {
            ClauseValue::Aggregate { group, .. } => group.as_ref(),
            _ => None,
        })
    }

    /// The aggregation granularity, if `consldt(...)` is given.
    pub fn aggregation(&self) -> Option<Granularity> {
        self.clauses.iter().find_map(|c| match &c.value {
            ClauseValue::Aggregate { granularity, .. } => Some(*granularity),
            _ => None,
        })
    }

    /// Records in the pool of `consldt(grid)`: the last size of `buffer(...)`.
    pub fn pool_records(&self) -> Option<&Value> {
        self.clauses.iter().find_map(|c| match &c.value {
            ClauseValue::Buffer { sizes, .. } => sizes.last(),
            _ => None,
        })
    }

    /// The names listed in `work(...)`.
    pub fn work(&self) -> Option<&[String]> {
        self.clauses.iter().find_map(|c| match &c.value {
            ClauseValue::Names(w) if c.name == ClauseName::Work => Some(w.as_slice()),
            _ => None,
        })
    }

    /// `alloc(...)`: the choice and the clause's span.
    pub fn alloc(&self) -> Option<(AllocChoice, Span)> {
        self.clauses.iter().find_map(|c| match &c.value {
            ClauseValue::Alloc(choice) => Some((*choice, c.span)),
            _ => None,
        })
    }

    /// `promote(kind[, G])`: how the chain is promoted, and the pool's
    /// blocks when given.
    pub fn promotion(&self) -> Option<(Promotion, Option<&Value>)> {
        self.clauses.iter().find_map(|c| match &c.value {
            ClauseValue::Promote { kind, pool } => Some((*kind, pool.as_ref())),
            _ => None,
        })
    }

    /// `floor` (`Some(None)`) or `floor(N)` (`Some(Some(N))`).
    pub fn floor(&self) -> Option<Option<&Value>> {
        self.clauses.iter().find_map(|c| match &c.value {
            ClauseValue::Positive(v) if c.name == ClauseName::Floor => Some(Some(v)),
            ClauseValue::Bare if c.name == ClauseName::Floor => Some(None),
            _ => None,
        })
    }

    /// Is this the `acquire` marker (a place in a promoted kernel, not a
    /// launch site)?
    pub fn is_acquire(&self) -> bool {
        self.clauses.iter().any(|c| c.name == ClauseName::Acquire)
    }

    pub fn child_threads(&self) -> Option<&str> {
        self.clauses.iter().find_map(|c| match &c.value {
            ClauseValue::Expression(e) if c.name == ClauseName::ChildThreads => Some(e.as_str()),
            _ => None,
        })
    }

    /// The clauses as the preprocessor reads them, normalized, safe to put
    /// in a `/* ... */` comment of generated code.
    pub fn summary(&self) -> String {
        let parts: Vec<&str> = self.clauses.iter().map(|c| c.text.as_str()).collect();
        format!("#pragma dp {}", parts.join(" ")).replace("*/", "* /")
    }
}

/// Is this directive text a `#pragma dp`? (Translation phases 1-3 first:
/// splices, comments, the `%:` digraph.)
pub fn is_dp_pragma(text: &str) -> bool {
    is_dp_pragma_text(&directive_text(text, 0).text)
}

/// Deepest bracket nesting that a clause argument may have; deeper input is
/// refused rather than parsed recursively.
pub const MAX_NESTING: usize = 256;

/// Parse and validate a pragma given as its logical text (phases 1-3 done,
/// offsets mapped back to the file: src/phases.rs).
pub fn parse_directive(logical: &LogicalText) -> Result<Directive, Vec<Diagnostic>> {
    let trimmed_len = logical.text.trim_end().len();
    let blanked = &logical.text[..trimmed_len];
    let whole = logical.source_span(0..trimmed_len);
    let map = |r: std::ops::Range<usize>| logical.source_span(r);
    if let Some(at) = too_deep(blanked, MAX_NESTING) {
        return Err(vec![Diagnostic::new(
            DiagnosticKind::TooDeep { limit: MAX_NESTING },
            map(at..at + 1),
            "nested too deeply from here",
        )]);
    }
    let pairs = match DpGrammar::parse(Rule::pragma, blanked) {
        Ok(mut pairs) => pairs.next().expect("pragma rule").into_inner(),
        Err(err) => {
            let pos = match err.location {
                pest::error::InputLocation::Pos(p) => p,
                pest::error::InputLocation::Span((s, _)) => s,
            };
            let at = pos.min(trimmed_len);
            return Err(vec![Diagnostic::new(
                DiagnosticKind::MalformedPragma,
                map(at..(at + 1).min(trimmed_len).max(at)),
                "unexpected text here",
            )]);
        }
    };

    let mut errors = Vec::new();
    let mut clauses: Vec<Clause> = Vec::new();
    for clause in pairs.filter(|p| p.as_rule() == Rule::clause) {
        let span = clause.as_span();
        let text = normalized(span.as_str());
        // Without arguments the clause rule also took the blanks after the name.
        let end = span.start() + span.as_str().trim_end().len();
        let span = map(span.start()..end);
        let mut inner = clause.into_inner();
        let name_pair = inner.next().expect("clause name");
        let name = name_pair.as_str().to_string();
        let name_span = map(name_pair.as_span().start()..name_pair.as_span().end());
        let mut args: Vec<(String, Span)> = Vec::new();
        let mut has_args = false;
        let mut unclosed = false;
        if let Some(arg_list) = inner.next() {
            has_args = true;
            for arg in arg_list.into_inner() {
                match arg.as_rule() {
                    Rule::clause_arg => {
                        let s = arg.as_span();
                        args.push((arg.as_str().trim().to_string(), map(s.start()..s.end())));
                    }
                    Rule::unclosed => unclosed = true,
                    _ => {}
                }
            }
        }
        let Some(clause_name) = ClauseName::from_spelling(&name) else {
            errors.push(Diagnostic::new(
                DiagnosticKind::UnknownClause {
                    suggestion: suggest(&name, &ClauseName::spellings()),
                    name,
                },
                name_span,
                "not a `#pragma dp` clause",
            ));
            continue;
        };
        if unclosed {
            errors.push(Diagnostic::new(
                DiagnosticKind::UnclosedArguments { clause: name },
                span,
                "missing `)`",
            ));
            continue;
        }
        match clause_value(clause_name, has_args, &args, &span) {
            Ok(value) => {
                if clauses.iter().any(|c| c.name == clause_name) {
                    errors.push(Diagnostic::new(
                        DiagnosticKind::DuplicateClause { clause: name },
                        span,
                        "second occurrence",
                    ));
                } else {
                    clauses.push(Clause {
                        name: clause_name,
                        value,
                        span,
                        text,
                    });
                }
            }
            Err(diagnostic) => errors.push(diagnostic),
        }
    }
    let directive = Directive {
        span: whole,
        clauses,
    };
    errors.extend(check_combination(&directive));
    if errors.is_empty() {
        Ok(directive)
    } else {
        Err(errors)
    }
}

/// A clause's arguments, read as its row's `Takes` says.
fn clause_value(
    clause: ClauseName,
    has_args: bool,
    args: &[(String, Span)],
    span: &Span,
) -> Result<ClauseValue, Diagnostic> {
    let name = clause.spelling();
    if clause.is_marker() && has_args {
        return Err(Diagnostic::new(
            DiagnosticKind::WrongArgumentCount {
                clause: name.to_string(),
                expected: "no arguments (it is a marker)",
                found: args.len(),
            },
            *span,
            "here",
        ));
    }
    // Without its value, an optional one keeps the default.
    if clause.is_optional() && !has_args {
        return Ok(ClauseValue::Bare);
    }
    if !clause.is_marker() && (!has_args || args.is_empty()) {
        return Err(Diagnostic::new(
            DiagnosticKind::MissingArguments {
                clause: name.to_string(),
                expected: clause.syntax(),
            },
            *span,
            "arguments expected",
        ));
    }
    let count = |range: std::ops::RangeInclusive<usize>, what: &'static str| {
        if range.contains(&args.len()) {
            Ok(())
        } else {
            Err(Diagnostic::new(
                DiagnosticKind::WrongArgumentCount {
                    clause: name.to_string(),
                    expected: what,
                    found: args.len(),
                },
                *span,
                "here",
            ))
        }
    };
    let value = |i: usize| positive_value(name, &args[i].0, args[i].1);
    let one_value = || {
        count(1..=1, "one positive integer")?;
        value(0)
    };
    Ok(match clause.takes() {
        Takes::OptionalPositive { .. } => ClauseValue::Positive(one_value()?),
        Takes::Positive { max, .. } => {
            let value = one_value()?;
            // A macro's value is the analyzer's to check, where the file's
            // constants are known.
            if let (Value::Literal(n), Some(limit)) = (&value, max) {
                if *n > limit.max {
                    return Err(Diagnostic::new(
                        DiagnosticKind::AboveLimit {
                            clause: name.to_string(),
                            value: args[0].0.clone(),
                            limit: limit.max,
                        },
                        args[0].1,
                        limit.why,
                    ));
                }
            }
            ClauseValue::Positive(value)
        }
        Takes::AllocChoice => {
            count(1..=1, "one of warp, block, none")?;
            let text = args[0].0.as_str();
            let Some(choice) = AllocChoice::from_spelling(text) else {
                let spellings: Vec<&str> = AllocChoice::ALL.iter().map(|c| c.spelling()).collect();
                return Err(Diagnostic::new(
                    DiagnosticKind::BadAllocChoice {
                        value: text.to_string(),
                        suggestion: suggest(text, &spellings),
                    },
                    args[0].1,
                    "not warp, block or none",
                ));
            };
            ClauseValue::Alloc(choice)
        }
        Takes::Expression => {
            count(1..=1, "one expression")?;
            ClauseValue::Expression(args[0].0.clone())
        }
        Takes::Granularity => {
            count(1..=2, "a granularity and, for multiblock, a group size")?;
            let (granularity, group) = kind_and_size(
                name,
                args,
                &Granularity::ALL.map(|g| (g, g.spelling())),
                |value, suggestion| DiagnosticKind::BadGranularity { value, suggestion },
                (
                    "unknown granularity",
                    "group size for a granularity without groups",
                ),
                (
                    Granularity::MultiBlock,
                    "a group size only with `multiblock`",
                ),
                value,
            )?;
            ClauseValue::Aggregate { granularity, group }
        }
        Takes::Promotion => {
            count(
                1..=2,
                "`basic` or `aggregate` and, for aggregate, the pool's blocks",
            )?;
            let (kind, pool) = kind_and_size(
                name,
                args,
                &Promotion::ALL.map(|p| (p, p.spelling())),
                |value, suggestion| DiagnosticKind::BadPromotion { value, suggestion },
                ("unknown kind of promotion", "pool size for basic promotion"),
                (Promotion::Aggregate, "a pool size only with `aggregate`"),
                value,
            )?;
            ClauseValue::Promote { kind, pool }
        }
        Takes::Marker => ClauseValue::Marker,
        Takes::Names => {
            for (arg, range) in args {
                if !is_identifier(arg) {
                    return Err(Diagnostic::new(
                        DiagnosticKind::BadWorkVariable { value: arg.clone() },
                        *range,
                        "not an identifier",
                    ));
                }
            }
            ClauseValue::Names(args.iter().map(|a| a.0.clone()).collect())
        }
        Takes::Buffer => {
            count(1..=3, "a kind and up to two sizes")?;
            let kind = args[0].0.clone();
            if !["default", "halloc", "custom"].contains(&kind.as_str()) {
                return Err(Diagnostic::new(
                    DiagnosticKind::BadBufferKind { value: kind },
                    args[0].1,
                    "unknown buffer kind",
                ));
            }
            let sizes = (1..args.len()).map(value).collect::<Result<Vec<_>, _>>()?;
            ClauseValue::Buffer { kind, sizes }
        }
    })
}

/// The arguments of a clause that names a kind and, for one kind, a size
/// (`consldt(multiblock, 8)`, `promote(aggregate, 32)`): the kind (by its
/// spelling in `kinds`; another word is `bad`, with a "did you mean") and
/// the size, which only `sized.0` takes (`sized.1` says so otherwise).
/// `labels`: the label of an unknown kind, and of a size given to another.
fn kind_and_size<K: Copy + PartialEq>(
    clause: &str,
    args: &[(String, Span)],
    kinds: &[(K, &'static str)],
    bad: impl Fn(String, Option<String>) -> DiagnosticKind,
    labels: (&'static str, &'static str),
    sized: (K, &'static str),
    value: impl Fn(usize) -> Result<Value, Diagnostic>,
) -> Result<(K, Option<Value>), Diagnostic> {
    let word = args[0].0.as_str();
    let Some(&(kind, _)) = kinds.iter().find(|(_, spelling)| *spelling == word) else {
        let spellings: Vec<&str> = kinds.iter().map(|(_, s)| *s).collect();
        return Err(Diagnostic::new(
            bad(word.to_string(), suggest(word, &spellings)),
            args[0].1,
            labels.0,
        ));
    };
    if args.len() < 2 {
        return Ok((kind, None));
    }
    if kind != sized.0 {
        return Err(Diagnostic::new(
            DiagnosticKind::WrongArgumentCount {
                clause: clause.to_string(),
                expected: sized.1,
                found: 2,
            },
            args[1].1,
            labels.1,
        ));
    }
    Ok((kind, Some(value(1)?)))
}

/// Threads a block can have.
pub const MAX_BLOCK_THREADS: u64 = 1024;

/// A positive integer literal (decimal, hex, octal, with u/l suffixes) or a
/// macro name.
fn positive_value(clause: &str, text: &str, range: Span) -> Result<Value, Diagnostic> {
    let err = |kind| Err(Diagnostic::new(kind, range, "this value"));
    if text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        if is_identifier(text) {
            return Ok(Value::Macro(text.to_string()));
        }
        return err(DiagnosticKind::NotAnInteger {
            clause: clause.to_string(),
            value: text.to_string(),
        });
    }
    let digits = text
        .trim_end_matches(['u', 'U', 'l', 'L'])
        .replace('\'', "");
    let parsed = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16)
    } else if digits.len() > 1 && digits.starts_with('0') {
        u64::from_str_radix(&digits[1..], 8)
    } else {
        digits.parse::<u64>()
    };
    match parsed {
        Ok(0) => err(DiagnosticKind::NotPositive {
            clause: clause.to_string(),
            value: text.to_string(),
        }),
        Ok(n) => Ok(Value::Literal(n)),
        Err(_) if text.starts_with('-') => err(DiagnosticKind::NotPositive {
            clause: clause.to_string(),
            value: text.to_string(),
        }),
        Err(e) if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) => {
            err(DiagnosticKind::TooLarge {
                clause: clause.to_string(),
                value: text.to_string(),
            })
        }
        Err(_) => err(DiagnosticKind::NotAnInteger {
            clause: clause.to_string(),
            value: text.to_string(),
        }),
    }
}

/// Blanks collapsed to one space.
fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The offset where bracket nesting first exceeds `limit`, if it does.
fn too_deep(text: &str, limit: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(i);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Checks across clauses: tuning clauses need their main clause; clauses
/// recognised but not applied by this version are errors.
fn check_combination(directive: &Directive) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    let has = |clause: ClauseName| directive.clauses.iter().any(|c| c.name == clause);
    for clause in &directive.clauses {
        match clause.name.needs() {
            Some(needed) if !has(needed.clause()) => {
                let (kind, label) = needed.missing(clause.name.spelling());
                errors.push(Diagnostic::new(kind, clause.span, label));
            }
            _ => {}
        }
    }
    // `promote` turns the launch into the release of a step that already
    // runs, and `acquire` marks a place in the kernel: neither means
    // anything together with another clause.
    for alone in [ClauseName::Promote, ClauseName::Acquire] {
        if has(alone) {
            for clause in directive.clauses.iter().filter(|c| c.name != alone) {
                errors.push(Diagnostic::new(
                    DiagnosticKind::ClauseConflict {
                        clause: alone.spelling().to_string(),
                        other: clause.name.spelling().to_string(),
                    },
                    clause.span,
                    format!("cannot be combined with `{}`", alone.spelling()),
                ));
            }
            return errors;
        }
    }
    // The floor's drain already runs the large children of the whole parent
    // grid as one grid: aggregating them on the device as well has no path.
    let find = |clause: ClauseName| directive.clauses.iter().find(|c| c.name == clause);
    if let (Some(floor), Some(aggregate)) = (find(ClauseName::Floor), find(ClauseName::Aggregate)) {
        errors.push(
            Diagnostic::new(
                DiagnosticKind::FloorWithAggregation,
                floor.span,
                "launch-free copy requested here",
            )
            .with_note(aggregate.span, "device-side aggregation requested here"),
        );
    }
    // Every granularity is applied (with `agg_threshold`, `work`, `threads`
    // and `blocks`), and `buffer(default, ...)` sizes the pool of multiblock
    // and grid; the other buffer kinds are not applied yet.
    if let Some(granularity) = directive.aggregation() {
        let pooled = matches!(granularity, Granularity::Grid | Granularity::MultiBlock);
        for clause in &directive.clauses {
            let pool_of_grid = pooled
                && matches!(&clause.value, ClauseValue::Buffer { kind, .. } if kind == "default");
            if clause.name == ClauseName::Buffer && !pool_of_grid {
                errors.push(Diagnostic::new(
                    DiagnosticKind::NotImplementedYet {
                        clause: clause.name.spelling().to_string(),
                    },
                    clause.span,
                    "not implemented yet",
                ));
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of a positive-integer clause (`Takes::Positive`).
    fn value(d: &Directive, clause: ClauseName) -> Option<&Value> {
        d.clauses.iter().find_map(|c| match &c.value {
            ClauseValue::Positive(v) if c.name == clause => Some(v),
            _ => None,
        })
    }

    fn parse(text: &str) -> Result<Directive, Vec<DiagnosticKind>> {
        parse_directive(&directive_text(text, 0))
            .map_err(|e| e.into_iter().map(|d| d.kind).collect())
    }

    #[test]
    fn recognises_dp_pragmas() {
        assert!(is_dp_pragma("#pragma dp threshold(1)"));
        assert!(is_dp_pragma("  # pragma   dp"));
        assert!(is_dp_pragma("#pragma /*x*/ dp coarsen(2)"));
        assert!(!is_dp_pragma("#pragma dpx"));
        assert!(!is_dp_pragma("#pragma unroll"));
        assert!(!is_dp_pragma("#define dp 1"));
    }

    #[test]
    fn threshold_and_coarsen() {
        let d = parse("#pragma dp threshold(128) coarsen(0x8)").unwrap();
        assert_eq!(value(&d, ClauseName::Threshold), Some(&Value::Literal(128)));
        assert_eq!(value(&d, ClauseName::Coarsen), Some(&Value::Literal(8)));
        let d = parse("#pragma dp threshold(TH) \\\n coarsen(CF) // tuned\n").unwrap();
        assert_eq!(
            value(&d, ClauseName::Threshold),
            Some(&Value::Macro("TH".into()))
        );
        assert_eq!(
            value(&d, ClauseName::Coarsen),
            Some(&Value::Macro("CF".into()))
        );
    }

    #[test]
    fn child_threads_takes_an_expression() {
        let d = parse("#pragma dp threshold(64) child_threads(end - f(a, b))").unwrap();
        assert_eq!(d.child_threads(), Some("end - f(a, b)"));
    }

    #[test]
    fn misspelt_clause_suggests() {
        let e = parse("#pragma dp treshold(128)").unwrap_err();
        assert_eq!(
            e,
            [DiagnosticKind::UnknownClause {
                name: "treshold".into(),
                suggestion: Some("threshold".into())
            }]
        );
    }

    #[test]
    fn bad_values() {
        assert!(matches!(
            parse("#pragma dp threshold(0)").unwrap_err()[0],
            DiagnosticKind::NotPositive { .. }
        ));
        assert!(matches!(
            parse("#pragma dp threshold(-4)").unwrap_err()[0],
            DiagnosticKind::NotPositive { .. }
        ));
        assert!(matches!(
            parse("#pragma dp coarsen(1.5)").unwrap_err()[0],
            DiagnosticKind::NotAnInteger { .. }
        ));
        assert!(matches!(
            parse("#pragma dp coarsen(2, 3)").unwrap_err()[0],
            DiagnosticKind::WrongArgumentCount { .. }
        ));
        assert!(matches!(
            parse("#pragma dp coarsen").unwrap_err()[0],
            DiagnosticKind::MissingArguments { .. }
        ));
        assert!(matches!(
            parse("#pragma dp coarsen(2").unwrap_err()[0],
            DiagnosticKind::UnclosedArguments { .. }
        ));
        // A bare pragma is the default configuration (analyzer/defaults.rs).
        assert!(parse("#pragma dp").unwrap().clauses.is_empty());
    }

    #[test]
    fn floor_takes_an_optional_size_and_excludes_consldt() {
        let d = parse("#pragma dp threshold(128) floor").unwrap();
        assert_eq!(d.floor(), Some(None));
        let d = parse("#pragma dp floor(4096) coarsen(8)").unwrap();
        assert_eq!(d.floor(), Some(Some(&Value::Literal(4096))));
        assert_eq!(value(&d, ClauseName::Threshold), None);
        assert!(matches!(
            parse("#pragma dp floor(0)").unwrap_err()[0],
            DiagnosticKind::NotPositive { .. }
        ));
        assert_eq!(
            parse("#pragma dp floor consldt(grid)").unwrap_err(),
            [DiagnosticKind::FloorWithAggregation]
        );
        // `promote` stands alone, `floor` included.
        assert_eq!(
            parse("#pragma dp promote(basic) floor").unwrap_err(),
            [DiagnosticKind::ClauseConflict {
                clause: "promote".into(),
                other: "floor".into()
            }]
        );
    }

    #[test]
    fn duplicates_are_errors() {
        let e = parse("#pragma dp threshold(1) threshold(2)").unwrap_err();
        assert_eq!(
            e,
            [DiagnosticKind::DuplicateClause {
                clause: "threshold".into()
            }]
        );
    }

    #[test]
    fn consldt_and_its_tuning_clauses() {
        let e = parse(
            "#pragma dp consldt(multiblock, 8) work(a, b) buffer(custom, 64, 4096) threads(256)",
        )
        .unwrap_err();
        assert_eq!(
            e,
            [DiagnosticKind::NotImplementedYet {
                clause: "buffer".into()
            },]
        );
        let d = parse("#pragma dp consldt(warp) threads(128) blocks(64)").unwrap();
        assert_eq!(value(&d, ClauseName::Threads), Some(&Value::Literal(128)));
        assert_eq!(value(&d, ClauseName::Blocks), Some(&Value::Literal(64)));
        let d = parse("#pragma dp consldt(multiblock, 8) buffer(default, 4096)").unwrap();
        assert_eq!(d.aggregation(), Some(Granularity::MultiBlock));
        assert_eq!(d.group(), Some(&Value::Literal(8)));
        assert_eq!(d.pool_records(), Some(&Value::Literal(4096)));
        let e = parse("#pragma dp consldt(block) buffer(halloc, 64)").unwrap_err();
        assert_eq!(
            e,
            [DiagnosticKind::NotImplementedYet {
                clause: "buffer".into()
            }]
        );
        let d = parse("#pragma dp threshold(64) consldt(warp) agg_threshold(4) work(a)").unwrap();
        assert_eq!(d.aggregation(), Some(Granularity::Warp));
        assert_eq!(
            value(&d, ClauseName::AggThreshold),
            Some(&Value::Literal(4))
        );
        assert_eq!(d.work(), Some(&["a".to_string()][..]));
        let e = parse("#pragma dp consldt(blok)").unwrap_err();
        assert!(
            matches!(&e[0], DiagnosticKind::BadGranularity { suggestion: Some(s), .. } if s == "block")
        );
        let e = parse("#pragma dp threshold(8) agg_threshold(4)").unwrap_err();
        assert_eq!(
            e,
            [DiagnosticKind::NeedsAggregation {
                clause: "agg_threshold".into()
            }]
        );
        let e = parse("#pragma dp consldt(warp, 4)").unwrap_err();
        assert!(matches!(e[0], DiagnosticKind::WrongArgumentCount { .. }));
    }

    #[test]
    fn every_clause_in_the_table_parses_by_its_spelling() {
        for &clause in ClauseName::ALL {
            assert_eq!(ClauseName::from_spelling(clause.spelling()), Some(clause));
            if clause.is_marker() {
                // A marker takes none.
                let e = parse(&format!("#pragma dp {}(1)", clause.spelling())).unwrap_err();
                assert!(matches!(e[0], DiagnosticKind::WrongArgumentCount { .. }));
                continue;
            }
            if clause.is_optional() {
                // Without arguments it keeps its default.
                let d = parse(&format!("#pragma dp {}", clause.spelling())).unwrap();
                assert_eq!(d.clauses[0].name, clause);
                continue;
            }
            // Without arguments each clause asks for the syntax the table gives.
            let e = parse(&format!("#pragma dp {}", clause.spelling())).unwrap_err();
            assert_eq!(
                e[0],
                DiagnosticKind::MissingArguments {
                    clause: clause.spelling().into(),
                    expected: clause.syntax()
                }
            );
        }
        assert_eq!(ClauseName::from_spelling("consolidate"), None);
    }

    #[test]
    fn needs_column_drives_the_combination_checks() {
        let sample = |clause: ClauseName| match clause {
            ClauseName::Aggregate => "consldt(grid)",
            ClauseName::ChildThreads => "child_threads(n)",
            ClauseName::Work => "work(a)",
            ClauseName::Buffer => "buffer(default, 64)",
            _ => "",
        };
        for &clause in ClauseName::ALL {
            let Some(needed) = clause.needs() else {
                continue;
            };
            let own = match sample(clause) {
                "" => format!("{}(4)", clause.spelling()),
                text => text.to_string(),
            };
            let e = parse(&format!("#pragma dp {own}")).unwrap_err();
            let expected = match needed {
                Needs::Threshold => DiagnosticKind::NeedsThreshold {
                    clause: clause.spelling().into(),
                },
                Needs::Aggregation => DiagnosticKind::NeedsAggregation {
                    clause: clause.spelling().into(),
                },
            };
            assert_eq!(e, [expected], "{own}");
            // With the clause it needs, the row parses.
            let needed_text = match sample(needed.clause()) {
                "" => format!("{}(4)", needed.clause().spelling()),
                text => text.to_string(),
            };
            assert!(
                parse(&format!("#pragma dp {own} {needed_text}")).is_ok(),
                "{own} {needed_text}"
            );
        }
    }

    #[test]
    fn a_literal_above_the_rows_limit_is_refused() {
        let e = parse("#pragma dp parent_threads(1025)").unwrap_err();
        assert_eq!(
            e,
            [DiagnosticKind::AboveLimit {
                clause: "parent_threads".into(),
                value: "1025".into(),
                limit: MAX_BLOCK_THREADS
            }]
        );
        assert!(parse("#pragma dp parent_threads(1024)").is_ok());
        assert!(parse("#pragma dp parent_threads(PT)").is_ok());
    }

    /// docs/PRAGMA.md's clause table has a row for every clause of the
    /// table here, so the documentation cannot miss one.
    #[test]
    fn pragma_docs_list_every_clause() {
        let docs = include_str!("../docs/PRAGMA.md");
        for &clause in ClauseName::ALL {
            let row = if clause.is_marker() {
                format!("| `{}` |", clause.spelling())
            } else {
                format!("| `{}(", clause.spelling())
            };
            assert!(docs.contains(&row), "docs/PRAGMA.md has no row {row}");
        }
        for g in Granularity::ALL {
            assert!(
                docs.contains(&format!("`consldt({}", g.spelling())),
                "docs/PRAGMA.md does not show consldt({})",
                g.spelling()
            );
        }
    }

    #[test]
    fn promote_and_its_marker() {
        let d = parse("#pragma dp promote(basic)").unwrap();
        assert_eq!(d.promotion(), Some((Promotion::Basic, None)));
        let d = parse("#pragma dp promote(aggregate, 0x20)").unwrap();
        assert_eq!(
            d.promotion(),
            Some((Promotion::Aggregate, Some(&Value::Literal(32))))
        );
        let d = parse("#pragma dp promote(aggregate, POOL)").unwrap();
        assert_eq!(
            d.promotion(),
            Some((Promotion::Aggregate, Some(&Value::Macro("POOL".into()))))
        );
        assert!(!d.is_acquire());
        let d = parse("#pragma dp acquire").unwrap();
        assert!(d.is_acquire());
        assert_eq!(d.promotion(), None);
        let e = parse("#pragma dp promote(agregate)").unwrap_err();
        assert!(
            matches!(&e[0], DiagnosticKind::BadPromotion { suggestion: Some(s), .. } if s == "aggregate")
        );
        let e = parse("#pragma dp promote(basic, 4)").unwrap_err();
        assert!(matches!(e[0], DiagnosticKind::WrongArgumentCount { .. }));
        let e = parse("#pragma dp promote(aggregate, 0)").unwrap_err();
        assert!(matches!(e[0], DiagnosticKind::NotPositive { .. }));
        let e = parse("#pragma dp acquire()").unwrap_err();
        assert!(matches!(e[0], DiagnosticKind::WrongArgumentCount { .. }));
        // Each stands alone: every other clause is named.
        let e = parse("#pragma dp threshold(64) promote(basic) coarsen(2)").unwrap_err();
        assert_eq!(
            e,
            [
                DiagnosticKind::ClauseConflict {
                    clause: "promote".into(),
                    other: "threshold".into()
                },
                DiagnosticKind::ClauseConflict {
                    clause: "promote".into(),
                    other: "coarsen".into()
                }
            ]
        );
        let e = parse("#pragma dp acquire consldt(warp)").unwrap_err();
        assert_eq!(
            e,
            [DiagnosticKind::ClauseConflict {
                clause: "acquire".into(),
                other: "consldt".into()
            }]
        );
    }

    #[test]
    fn unknown_clause_help_lists_the_table() {
        let help = DiagnosticKind::UnknownClause {
            name: "zzz".into(),
            suggestion: None,
        }
        .help()
        .unwrap();
        assert_eq!(
            help,
            format!("known clauses: {}", ClauseName::spellings().join(", "))
        );
        for &clause in ClauseName::ALL {
            assert!(help.contains(clause.spelling()));
        }
    }
}
