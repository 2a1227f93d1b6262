//! The parsed structure of a file: functions, launches and `#pragma dp`
//! directives, as byte ranges into the source.

use crate::token::Token;
use std::ops::Range;

/// Where a function runs, from its `__global__`/`__device__`/`__host__`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecutionSpace {
    pub global: bool,
    pub device: bool,
    pub host: bool,
}

impl ExecutionSpace {
    /// Code in this function runs on the device.
    pub fn runs_on_device(&self) -> bool {
        self.global || self.device
    }
}

/// One template parameter of a function template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateParam {
    /// The declaration without its default, e.g. `typename T` or `int N`.
    pub declaration: String,
    pub name: String,
    pub is_pack: bool,
}

/// One function parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The declaration without its default argument, e.g. `const int *row`.
    pub declaration: String,
    /// The parameter's name (`None` for an unnamed parameter).
    pub name: Option<String>,
    /// The default argument's text, if any.
    pub default: Option<String>,
}

/// A function definition (a declaration with a body).
#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub name_span: Range<usize>,
    pub space: ExecutionSpace,
    /// Byte offset where the declaration starts (`template` included).
    pub start: usize,
    /// `template <...>` as written, if the function is a template.
    pub template_header: Option<String>,
    pub template_params: Vec<TemplateParam>,
    /// `__launch_bounds__(...)` as written, if present.
    pub launch_bounds: Option<String>,
    pub params: Vec<Param>,
    /// The body from `{` to `}` inclusive.
    pub body: Range<usize>,
    /// Significant-token indices of the body's `{` and `}`.
    pub body_tokens: Range<usize>,
    /// Byte offset of the first declaration of this function (a forward
    /// declaration, or the definition itself).
    pub first_declared: usize,
}

/// A function declared without a body at namespace level
/// (`__device__ void helper(int *);`).
#[derive(Debug, Clone)]
pub struct Declaration {
    pub name: String,
    pub name_span: Range<usize>,
}

/// A kernel launch statement `name<targs><<<config>>>(args);`.
#[derive(Debug, Clone)]
pub struct Launch {
    pub kernel: String,
    pub kernel_span: Range<usize>,
    /// Explicit template arguments including the angle brackets.
    pub template_args: Option<String>,
    /// From the kernel name to the `;` inclusive.
    pub span: Range<usize>,
    /// Grid, block and optionally shared-memory size and stream.
    pub config: Vec<Range<usize>>,
    pub args: Vec<Range<usize>>,
    /// Span of the whole `<<<...>>>`.
    pub config_span: Range<usize>,
    /// Index into `Program::functions` of the function holding the launch.
    pub function: Option<usize>,
    /// Significant-token index of the first token of the statement.
    pub first_token: usize,
    /// Significant-token index of the `;`.
    pub last_token: usize,
}

/// A `#pragma dp` directive and what follows it.
#[derive(Debug, Clone)]
pub struct PragmaSite {
    /// Span of the directive text.
    pub span: Range<usize>,
    /// Significant-token index of the directive.
    pub token: usize,
    /// Significant-token index of the next significant token, if any.
    pub next_token: Option<usize>,
}

/// Everything the later stages need to know about a file.
#[derive(Debug, Clone, Default)]
pub struct Program {
    /// All tokens, blanks and comments included (they tile the file).
    pub tokens: Vec<Token>,
    /// The significant tokens only.
    pub sig: Vec<Token>,
    /// For each significant token that is a bracket, its partner's index.
    pub partner: Vec<Option<usize>>,
    pub functions: Vec<Function>,
    /// Member functions defined inside a struct, class or union body (at
    /// any nesting), sorted by body start. Not part of `by_name`.
    pub methods: Vec<Function>,
    /// Function declarations without a body at namespace level, in source
    /// order (a function may also be defined elsewhere in the file).
    pub declarations: Vec<Declaration>,
    pub launches: Vec<Launch>,
    pub pragmas: Vec<PragmaSite>,
    /// First function of each name.
    pub by_name: std::collections::HashMap<String, usize>,
    /// Offset of an unbalanced bracket, if any.
    pub unbalanced: Option<usize>,
}

impl Program {
    pub fn function_named(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Significant tokens whose start lies in `range`.
    pub fn sig_in(&self, range: Range<usize>) -> &[Token] {
        let lo = self.sig.partition_point(|t| t.start < range.start);
        let hi = self.sig.partition_point(|t| t.start < range.end);
        &self.sig[lo..hi]
    }

    /// Index of the first significant token starting at or after `offset`.
    pub fn sig_index_at(&self, offset: usize) -> usize {
        self.sig.partition_point(|t| t.start < offset)
    }

    /// All tokens whose start lies in `range`.
    pub fn tokens_in(&self, range: Range<usize>) -> &[Token] {
        let lo = self.tokens.partition_point(|t| t.start < range.start);
        let hi = self.tokens.partition_point(|t| t.start < range.end);
        &self.tokens[lo..hi]
    }
}
