//! The parsed structure of a file: functions, launches and `#pragma dp`
//! directives, as byte ranges into the source.

use crate::source::Span;
use crate::token::{SigIdx, Token};
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
    /// The default argument as written (`8` of `int WARPS = 8`).
    pub default: Option<String>,
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
    /// The enclosing namespaces, outermost first (an anonymous namespace is
    /// an empty name).
    pub namespace: Vec<String>,
    /// A name no other function of the file has, for generated macros.
    pub symbol: String,
    /// The `#if` branches it is defined in: (group, branch), outermost
    /// first (see `Program::conditions`).
    pub condition: Vec<(usize, usize)>,
    pub name_span: Span,
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
    pub body: Span,
    /// Significant-token indices of the body's `{` and `}`.
    pub body_tokens: Range<usize>,
    /// Byte offset of the first declaration of this function (a forward
    /// declaration, or the definition itself).
    pub first_declared: usize,
}

impl Function {
    /// Can it be called with `n` arguments (default arguments counted)?
    pub fn accepts(&self, n: usize) -> bool {
        let required = self
            .params
            .iter()
            .take_while(|p| p.default.is_none())
            .count();
        (required..=self.params.len()).contains(&n)
    }

    /// The name qualified with its namespaces (`a::b::f`).
    pub fn qualified_name(&self) -> String {
        let mut parts: Vec<&str> = self
            .namespace
            .iter()
            .map(|n| {
                if n.is_empty() {
                    "(anonymous namespace)"
                } else {
                    n.as_str()
                }
            })
            .collect();
        parts.push(&self.name);
        parts.join("::")
    }
}

crate::arena::arena!(
    /// The functions of the file (definitions), in source order.
    Functions,
    /// A function of the file: its index in `Program::functions`.
    FunctionId,
    Function
);

crate::arena::arena!(
    /// The kernel launches of the file, in source order.
    Launches,
    /// A launch of the file: its index in `Program::launches`.
    LaunchId,
    Launch
);

crate::arena::arena!(
    /// The `#pragma dp` lines of the file, in source order.
    Pragmas,
    /// A pragma of the file: its index in `Program::pragmas`.
    PragmaId,
    PragmaSite
);

/// A function declared without a body at namespace level
/// (`__device__ void helper(int *);`).
#[derive(Debug, Clone)]
pub struct Declaration {
    pub name: String,
    pub name_span: Span,
}

/// A kernel launch statement `name<targs><<<config>>>(args);`.
#[derive(Debug, Clone)]
pub struct Launch {
    pub kernel: String,
    pub kernel_span: Span,
    /// Explicit template arguments including the angle brackets.
    pub template_args: Option<String>,
    /// From the kernel name to the `;` inclusive.
    pub span: Span,
    /// Grid, block and optionally shared-memory size and stream.
    pub config: Vec<Span>,
    pub args: Vec<Span>,
    /// Span of the whole `<<<...>>>`.
    pub config_span: Span,
    /// The opening `<<<` and the closing `>>>` (each one token, or two
    /// with blanks between, `<< <` and `>> >`, as some formatters write
    /// them).
    pub open_chevrons: Span,
    pub close_chevrons: Span,
    /// The function holding the launch.
    pub function: Option<FunctionId>,
    /// The first token of the statement.
    pub first_token: SigIdx,
}

impl Launch {
    /// The launched kernel's name without its qualification.
    pub fn simple_name(&self) -> &str {
        self.kernel
            .rsplit("::")
            .next()
            .unwrap_or(&self.kernel)
            .trim()
    }
}

/// A `#pragma dp` directive (or `_Pragma("dp ...")` operator) and what
/// follows it.
#[derive(Debug, Clone)]
pub struct PragmaSite {
    /// Span of the directive text (of the operator, `_Pragma` to `)`).
    pub span: Span,
    /// The pragma as the preprocessor reads it, mapped to the file.
    pub logical: crate::phases::LogicalText,
    /// The directive (`_Pragma`).
    pub token: SigIdx,
    /// The next significant token, if any.
    pub next_token: Option<SigIdx>,
}

/// Everything the later stages need to know about a file.
#[derive(Debug, Clone, Default)]
pub struct Program {
    /// Macros defined on the command line (`-D NAME[=VALUE]`): constants
    /// and declared names, as if defined before the file.
    pub defines: Vec<(String, String)>,
    /// `--migrate-sync`: device-side syncs are migrated (`postwork.rs`), so
    /// a sync that is the last thing its thread runs is dropped.
    pub migrate_sync: bool,
    /// The source's ASCII view (`SourceFile::view`): the text every token,
    /// span and offset of the program refers to.
    pub view: String,
    /// All tokens, blanks and comments included (they tile the file).
    pub tokens: Vec<Token>,
    /// The significant tokens only.
    pub sig: Vec<Token>,
    /// Which significant tokens are matching brackets.
    pub brackets: crate::brackets::Brackets,
    pub functions: Functions,
    /// Member functions defined inside a struct, class or union body (at
    /// any nesting), sorted by body start. Not part of `by_name`.
    pub methods: Vec<Function>,
    /// Function declarations without a body at namespace level, in source
    /// order (a function may also be defined elsewhere in the file).
    pub declarations: Vec<Declaration>,
    pub launches: Launches,
    pub pragmas: Pragmas,
    /// `_Pragma("dp ...")` operators written in the arguments of a
    /// function-like macro of the file (span, macro name): whether they
    /// become a pragma depends on the macro's expansion, which dpopt does not
    /// perform.
    pub pragmas_in_macro_arguments: Vec<(Span, String)>,
    /// First function of each name.
    pub by_name: std::collections::HashMap<String, FunctionId>,
    /// Every function of each (unqualified) name.
    pub named: std::collections::HashMap<String, Vec<FunctionId>>,
    /// Offset of an unbalanced bracket, if any.
    pub unbalanced: Option<usize>,
    /// `using namespace` directives and `using` declarations at namespace
    /// level.
    pub usings: Vec<Using>,
    /// After each conditional directive (`#if`, `#elif`, `#else`, `#endif`
    /// and kin) at this offset, the (group, branch) stack in force.
    pub conditions: Vec<(usize, Vec<(usize, usize)>)>,
}

/// `using namespace a::b;` or `using a::f;` at namespace level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Using {
    /// The namespace the using stands in.
    pub scope: Vec<String>,
    /// The namespace (directive) or function (declaration) it names.
    pub target: Vec<String>,
    /// Written with a leading `::`.
    pub absolute: bool,
    /// `using namespace` (true) or a using declaration (false).
    pub directive: bool,
    /// Byte offset; only uses after it see it.
    pub at: usize,
}

/// What a name used in a function refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Found(FunctionId),
    NotFound,
    /// Several functions fit (overloads with the same number of arguments,
    /// or definitions in different `#if` branches).
    Ambiguous(Vec<FunctionId>),
}

impl Program {
    /// Is `name` assigned, incremented or has its address taken in
    /// `function`'s body?
    pub fn assigns(&self, function: &Function, name: &str) -> bool {
        let view = self.view.as_str();
        let body = self.sig_in(function.body);
        body.iter().enumerate().any(|(i, t)| {
            t.kind == crate::token::TokenKind::Ident
                && t.text(view) == name
                && crate::token::is_modified_at(body, i, view)
        })
    }

    /// The (group, branch) stack of `#if` branches at a byte offset.
    pub fn condition_at(&self, offset: usize) -> Vec<(usize, usize)> {
        let k = self.conditions.partition_point(|c| c.0 < offset);
        k.checked_sub(1)
            .map_or_else(Vec::new, |i| self.conditions[i].1.clone())
    }

    /// Are two functions in different branches of one `#if` group, so that
    /// at most one of them is compiled?
    pub fn exclusive(&self, a: FunctionId, b: FunctionId) -> bool {
        let (a, b) = (&self.functions[a].condition, &self.functions[b].condition);
        a.iter()
            .zip(b.iter())
            .find(|(x, y)| x != y)
            .is_some_and(|(x, y)| x.0 == y.0)
    }

    /// The definitions a launch may start: the one its name resolves to, or
    /// every candidate when that is ambiguous.
    pub fn launched_kernels(&self, launch: &Launch) -> Vec<FunctionId> {
        match self.resolve(
            &launch.kernel,
            launch.function,
            launch.span.start(),
            Some(launch.args.len()),
        ) {
            Resolution::Found(f) => vec![f],
            Resolution::Ambiguous(all) => all,
            Resolution::NotFound => Vec::new(),
        }
    }

    /// Is `offset` inside the body of one of the file's functions (not
    /// member functions defined in a class)?
    pub fn in_function_body(&self, offset: usize) -> bool {
        let fs = self.functions.as_slice();
        let k = fs.partition_point(|f| f.body.start() <= offset);
        k > 0 && offset < fs[k - 1].body.end()
    }

    pub fn function_named(&self, name: &str) -> Option<FunctionId> {
        self.by_name.get(name).copied()
    }

    /// Resolve a function name as written at byte offset `at` inside
    /// function `from` (`name` may be qualified: `b::f`, `::f`), called
    /// with `arity` arguments when known. C++ lookup, simplified: an
    /// unqualified name is looked up in the namespace of `from`, then in
    /// each enclosing one, the first namespace that has it wins (using
    /// directives and declarations standing in a namespace, before `at`,
    /// count as part of it); a qualified name `b::f` is `N::b::f` for the
    /// innermost enclosing `N` that has one; `::f` is global. Among the
    /// candidates, those that can take `arity` arguments are kept.
    pub fn resolve(
        &self,
        name: &str,
        from: Option<FunctionId>,
        at: usize,
        arity: Option<usize>,
    ) -> Resolution {
        let parts: Vec<&str> = name.split("::").map(str::trim).collect();
        let absolute = parts.first() == Some(&"");
        let parts: Vec<&str> = parts.into_iter().filter(|p| !p.is_empty()).collect();
        let Some((&simple, qualifier)) = parts.split_last() else {
            return Resolution::NotFound;
        };
        let home: Vec<String> = from
            .map(|f| self.functions[f].namespace.clone())
            .unwrap_or_default();
        let scopes: Vec<&[String]> = if absolute {
            vec![&[]]
        } else {
            (0..=home.len()).rev().map(|k| &home[..k]).collect()
        };
        for scope in scopes {
            let mut candidates: Vec<FunctionId> = Vec::new();
            let same_name = self.named.get(simple).map_or(&[][..], Vec::as_slice);
            let mut look_in = |ns: Vec<String>| {
                for &i in same_name {
                    if self.functions[i].namespace == ns && !candidates.contains(&i) {
                        candidates.push(i);
                    }
                }
            };
            let mut base: Vec<String> = scope.to_vec();
            base.extend(qualifier.iter().map(|q| q.to_string()));
            look_in(base);
            if qualifier.is_empty() && !absolute {
                for u in self.usings.iter().filter(|u| u.scope == scope && u.at < at) {
                    let mut target = if u.absolute {
                        Vec::new()
                    } else {
                        scope.to_vec()
                    };
                    target.extend(u.target.iter().cloned());
                    if u.directive {
                        look_in(target.clone());
                        // `using namespace b;` written from the global scope.
                        look_in(u.target.clone());
                    } else if u.target.last().map(String::as_str) == Some(simple) {
                        target.pop();
                        look_in(target.clone());
                        let mut global = u.target.clone();
                        global.pop();
                        look_in(global);
                    }
                }
            }
            if candidates.is_empty() {
                continue;
            }
            if let Some(n) = arity {
                let fits: Vec<FunctionId> = candidates
                    .iter()
                    .copied()
                    .filter(|&i| self.functions[i].accepts(n))
                    .collect();
                if !fits.is_empty() {
                    candidates = fits;
                }
            }
            return match candidates.as_slice() {
                [one] => Resolution::Found(*one),
                _ => Resolution::Ambiguous(candidates),
            };
        }
        Resolution::NotFound
    }

    /// Significant tokens whose start lies in `span`.
    pub fn sig_in(&self, span: impl Into<Span>) -> &[Token] {
        let span = span.into();
        let lo = self.sig.partition_point(|t| t.start < span.start());
        let hi = self.sig.partition_point(|t| t.start < span.end());
        &self.sig[lo..hi]
    }

    /// Index of the first significant token starting at or after `offset`.
    pub fn sig_index_at(&self, offset: usize) -> usize {
        self.sig.partition_point(|t| t.start < offset)
    }

    /// All tokens whose start lies in `span`.
    pub fn tokens_in(&self, span: impl Into<Span>) -> &[Token] {
        let span = span.into();
        let lo = self.tokens.partition_point(|t| t.start < span.start());
        let hi = self.tokens.partition_point(|t| t.start < span.end());
        &self.tokens[lo..hi]
    }
}
