//! Copies a range of the source to output bytes, rewriting the `#pragma dp`
//! launch sites inside it and, for copies of a child's body, replacing the
//! thread and block builtins by parameters.

use super::site::site_code;
use super::templates::Templates;
use super::TextCodec;
use crate::plan::Plan;
use crate::plan::SiteId;
use crate::program::{FunctionId, Program};
use crate::source::SourceFile;
use crate::source::Span;
use crate::token::TokenKind;
use crate::writer::Sink;
use std::collections::HashMap;

/// Replacement names for `threadIdx`, `blockIdx`, `blockDim`, `gridDim`.
#[derive(Debug, Clone, Copy)]
pub struct Builtins;

impl Builtins {
    pub fn replacement(name: &str) -> Option<&'static str> {
        Some(match name {
            "threadIdx" => "dpopt_threadIdx",
            "blockIdx" => "dpopt_blockIdx",
            "blockDim" => "dpopt_blockDim",
            "gridDim" => "dpopt_gridDim",
            _ => return None,
        })
    }
}

pub struct Renderer<'a> {
    pub file: &'a SourceFile,
    pub program: &'a Program,
    pub plan: &'a Plan,
    pub templates: &'a Templates,
    pub codec: TextCodec,
    /// Rendering the launch-free copy of a `floor` parent: its sites record
    /// large children for the drain, and its reads of the thread's last
    /// device-runtime error are `cudaSuccess` (it makes no runtime call).
    pub floor: bool,
    /// Rendering the split serial version of a recursive child
    /// (`serial_split.rs`): its own launches of the child are launched as
    /// written, never run serially, so that the serial version never calls
    /// itself and its block's arrays stay one frame of a stack of known size.
    pub split: bool,
    /// Start offset of each rewritten pragma -> index into `plan.sites`.
    site_at: HashMap<usize, SiteId>,
    /// What copies of bodies write at their calls of callees that read
    /// positions (`position_calls`).
    positions: Vec<(Span, String)>,
    /// Start offset of each position query of a block group -> the query
    /// (`hazard::BlockQuery`), written with the builtins in copies.
    queries: HashMap<usize, crate::hazard::BlockQuery>,
    /// Start offset of each renamed callee (an aggregated allocation's
    /// `malloc`/`cudaMalloc`, a slice's `free`/`cudaFree`) -> its new name,
    /// in the file and in every copy of a body.
    renamed: HashMap<usize, String>,
    /// Start offset of each name of a template parameter in the body of a
    /// template callee that a split serial version runs in place, of each
    /// renamed `__shared__` name and of each tile's query -> its end and
    /// what the split writes there (`Phased::instances`).
    instances: HashMap<usize, (usize, String)>,
}

impl<'a> Renderer<'a> {
    pub fn new(
        file: &'a SourceFile,
        program: &'a Program,
        plan: &'a Plan,
        templates: &'a Templates,
    ) -> Self {
        let site_at = plan
            .sites
            .with_ids()
            .map(|(i, s)| (program.pragmas[s.pragma].span.start(), i))
            .collect();
        let renamed = plan
            .renamed_calls()
            .into_iter()
            .map(|(callee, name)| (callee.start(), name))
            .collect();
        let queries = plan
            .positions
            .queries
            .iter()
            .map(|q| (q.span.start(), *q))
            .collect();
        Renderer {
            file,
            program,
            plan,
            templates,
            codec: TextCodec::for_bytes(&file.bytes),
            floor: false,
            split: false,
            site_at,
            queries,
            renamed,
            positions: Vec::new(),
            instances: HashMap::new(),
        }
        .with_positions()
    }

    /// The same renderer, for the launch-free copy of a `floor` parent.
    pub fn for_floor(&self) -> Renderer<'a> {
        Renderer {
            file: self.file,
            program: self.program,
            plan: self.plan,
            templates: self.templates,
            codec: self.codec,
            floor: true,
            split: self.split,
            site_at: self.site_at.clone(),
            queries: self.queries.clone(),
            renamed: self.renamed.clone(),
            positions: self.positions.clone(),
            instances: self.instances.clone(),
        }
    }

    /// The same renderer, for the split serial version of a recursive child.
    pub fn for_split(&self) -> Renderer<'a> {
        Renderer {
            file: self.file,
            program: self.program,
            plan: self.plan,
            templates: self.templates,
            codec: self.codec,
            floor: self.floor,
            split: true,
            site_at: self.site_at.clone(),
            queries: self.queries.clone(),
            renamed: self.renamed.clone(),
            positions: self.positions.clone(),
            instances: self.instances.clone(),
        }
    }

    /// The same renderer, writing the arguments of the template callees a
    /// split runs in place for their parameters' names.
    pub fn with_instances(mut self, instances: &[(Span, String)]) -> Renderer<'a> {
        self.instances = instances
            .iter()
            .map(|(span, text)| (span.start(), (span.end(), text.clone())))
            .collect();
        self
    }

    /// What a copy of a body writes at its calls of callees that read
    /// positions (`position_clone.rs`): the copy's name, and the positions
    /// as the first arguments.
    pub fn position_calls(&self) -> &[(Span, String)] {
        &self.positions
    }

    fn with_positions(mut self) -> Self {
        let calls = &self.plan.positions.calls;
        if calls.is_empty() {
            return self;
        }
        let args = super::position_clone::text(&self, "args");
        let mut out = Vec::with_capacity(2 * calls.len());
        for c in calls {
            let name = self.codec.to_text(&self.file.bytes[c.name.range()]);
            out.push((c.name, crate::names::position_clone(&name)));
            let sep = if c.empty { "" } else { ", " };
            out.push((c.open, format!("({args}{sep}")));
        }
        self.positions = out;
        self
    }

    /// Render `range` (which starts and ends on token boundaries).
    /// `copy_of`: the child whose body this is a copy of (builtins are then
    /// replaced by parameters); `None` for the file itself.
    /// `overrides`: sub-ranges replaced by given text.
    pub fn render(
        &self,
        range: Span,
        copy_of: Option<FunctionId>,
        overrides: &[(Span, String)],
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(range.len() + 64);
        self.render_into(&mut out, range, copy_of, overrides);
        out
    }

    /// `render`, writing the user's bytes and the generated text apart
    /// (`writer::Sink`).
    pub fn render_into(
        &self,
        out: &mut impl Sink,
        range: Span,
        copy_of: Option<FunctionId>,
        overrides: &[(Span, String)],
    ) {
        let substitute = copy_of.is_some();
        let tokens = self.program.tokens_in(range);
        let mut i = 0;
        while i < tokens.len() {
            let t = tokens[i];
            let skip_to = if let Some((r, text)) =
                overrides.iter().find(|(r, _)| r.start() == t.start)
            {
                out.generated(text.as_bytes());
                Some(r.end())
            } else if let (TokenKind::Directive | TokenKind::Ident, Some(&site)) =
                (t.kind, self.site_at.get(&t.start))
            {
                site_code(self, site, copy_of, out);
                Some(
                    self.program.launches[self.plan.sites[site].launch]
                        .span
                        .end(),
                )
            } else if let Some(q) = self.queries.get(&t.start).filter(|_| substitute) {
                out.generated(self.query_text(q).as_bytes());
                Some(q.span.end())
            } else if let (Some(f), true) = (copy_of, self.program.migrate_sync && !self.floor) {
                // A copy of a child's body: its final CDP1 wait, which
                // `--migrate-sync` drops in the kernel itself, goes too.
                self.dropped_wait(&t, f)
                    .inspect(|_| out.generated(b"(void)0 /* dpopt: CDP1 wait dropped */"))
            } else if self.floor && t.kind == TokenKind::Ident {
                self.last_error_read(&t)
                    .inspect(|_| out.generated(b"cudaSuccess"))
                    .or_else(|| {
                        let stand_in = match t.text(&self.file.view) {
                            "cudaStreamCreateWithFlags" => "dpopt_floor_stream_create",
                            "cudaStreamDestroy" => "dpopt_floor_stream_destroy",
                            // The parent's final wait, which `--migrate-sync`
                            // drops (`floor` refuses any other).
                            "cudaDeviceSynchronize" | "cudaThreadSynchronize" => {
                                "dpopt_floor_dropped_wait"
                            }
                            _ => return None,
                        };
                        out.generated(stand_in.as_bytes());
                        Some(t.end)
                    })
            } else {
                None
            };
            if let Some(end) = skip_to {
                while i < tokens.len() && tokens[i].start < end {
                    i += 1;
                }
                continue;
            }
            if let (TokenKind::Ident, Some(name)) = (t.kind, self.renamed.get(&t.start)) {
                out.generated(name.as_bytes());
                i += 1;
                continue;
            }
            if let (TokenKind::Ident, true, Some((end, text))) =
                (t.kind, substitute, self.instances.get(&t.start))
            {
                out.generated(text.as_bytes());
                while i < tokens.len() && tokens[i].start < *end {
                    i += 1;
                }
                continue;
            }
            match (t.kind, substitute) {
                (TokenKind::Ident, true) => match Builtins::replacement(t.text(&self.file.view)) {
                    Some(r) => out.generated(r.as_bytes()),
                    None => out.user(&self.file.bytes[t.range()]),
                },
                _ => out.user(&self.file.bytes[t.range()]),
            }
            i += 1;
        }
    }

    /// A block group's position query as the builtins it reads, replaced
    /// like the others: `cta.thread_rank()` is the thread's rank in its
    /// block, `cta.group_index()` is `blockIdx`. A count keeps the query's
    /// own type (`unsigned` for a `thread_block`, `unsigned long long` for
    /// a `thread_group`); `decltype` does not run the query.
    fn query_text(&self, q: &crate::hazard::BlockQuery) -> String {
        use crate::hazard::BlockPosition;
        let query = self.codec.to_text(&self.file.bytes[q.span.range()]);
        let read = match q.position {
            BlockPosition::Rank => {
                "threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)"
            }
            BlockPosition::Size => "blockDim.x * blockDim.y * blockDim.z",
            BlockPosition::ThreadIndex => return substitute_builtins("dim3(threadIdx)"),
            BlockPosition::Dim => return substitute_builtins("dim3(blockDim)"),
            BlockPosition::GroupIndex => return substitute_builtins("dim3(blockIdx)"),
        };
        format!(
            "static_cast<decltype({query})>({})",
            substitute_builtins(read)
        )
    }

    /// At a CDP1 wait of kernel `f` that `--migrate-sync` drops (the last
    /// thing its thread runs, `postwork::is_dropped`): the end of the call.
    fn dropped_wait(&self, t: &crate::token::Token, f: FunctionId) -> Option<usize> {
        if t.kind != TokenKind::Ident
            || !crate::postwork::SYNC_CALLS.contains(&t.text(&self.file.view))
        {
            return None;
        }
        let k = self.program.sig_index_at(t.start);
        let ruled_out = crate::conditional::ruled_out(self.program);
        crate::postwork::is_dropped(self.program, f, k, &ruled_out)
            .then(|| self.program.sig[k + 2].end)
    }

    /// At `cudaGetLastError()` or `cudaPeekAtLastError()` (the call), the
    /// end of the call: in code that makes no device-runtime call the
    /// thread's last error is always `cudaSuccess`.
    fn last_error_read(&self, t: &crate::token::Token) -> Option<usize> {
        if !matches!(
            t.text(&self.file.view),
            "cudaGetLastError" | "cudaPeekAtLastError"
        ) {
            return None;
        }
        let i = self.program.sig_index_at(t.start);
        let sig = &self.program.sig;
        let text = |k: usize| sig.get(k).map(|t| t.text(&self.file.view));
        (text(i + 1) == Some("(") && text(i + 2) == Some(")")).then(|| sig[i + 2].end)
    }

    /// A function's head before its name (after its template header), as
    /// written, token by token: without comments, directives, splices or a
    /// stray `#`, so that it can be repeated on one line.
    pub fn head_specifiers(&self, f: &crate::program::Function) -> Vec<String> {
        let head_start = f.start + f.template_header.as_ref().map_or(0, String::len);
        let sig = &self.program.sig;
        let first = sig.partition_point(|t| t.start < head_start);
        sig[first..]
            .iter()
            .take_while(|t| t.end <= f.name_span.start())
            .filter(|t| t.kind != TokenKind::Directive)
            .map(|t| {
                crate::phases::without_splices(
                    &self.codec.to_text(&self.file.bytes[t.start..t.end]),
                )
            })
            .filter(|t| t != "#" && t != "%:")
            .collect()
    }

    /// Render `range` as template text.
    pub fn render_text(
        &self,
        range: Span,
        copy_of: Option<FunctionId>,
        overrides: &[(Span, String)],
    ) -> String {
        self.codec.to_text(&self.render(range, copy_of, overrides))
    }

    /// Replace builtins in a short piece of text that is not a file range
    /// (a `child_threads(...)` expression).
    pub fn substitute_text(&self, text: &str, substitute: bool) -> String {
        if !substitute {
            return text.to_string();
        }
        substitute_builtins(text)
    }
}

/// `text` with every builtin (`threadIdx`, ...) replaced by its parameter,
/// on the lexer's tokens, so that a builtin's name inside a string, a
/// character literal or a comment stays as written.
fn substitute_builtins(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for t in crate::lexer::lex_text(text) {
        let word = &text[t.start..t.end];
        match t.kind {
            crate::token::TokenKind::Ident => {
                out.push_str(Builtins::replacement(word).unwrap_or(word))
            }
            _ => out.push_str(word),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::substitute_builtins;

    #[test]
    fn builtins_are_replaced_outside_strings_and_comments() {
        assert_eq!(
            substitute_builtins("n * blockDim.x /* blockDim */ + f(\"gridDim\", threadIdx.y)"),
            "n * dpopt_blockDim.x /* blockDim */ + f(\"gridDim\", dpopt_threadIdx.y)"
        );
        assert_eq!(
            substitute_builtins("myblockDim + blockDimx"),
            "myblockDim + blockDimx"
        );
    }
}
