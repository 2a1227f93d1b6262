//! The serial version of a child split at its block barriers
//! (`barrier_split.rs`, `templates/serial_split.cu.tera`): generated parts
//! around the user's bytes of each phase, construct head and shared
//! declaration.

use super::context::{
    SerialSplitContext, SplitBind, SplitExchange, SplitGuard, SplitVar, SplitVote,
};
use super::renderer::Renderer;
use crate::barrier_split::{Bind, BlockDeclaration, Keep, Phased, Step, Vote, VoteOp};
use crate::plan::ChildPlan;
use crate::source::Span;
use crate::warp_exchange::Exchange;
use crate::writer::{Fragment, Sink};

struct Split<'a, 'r> {
    r: &'a Renderer<'r>,
    plan: &'a ChildPlan,
    phased: &'a Phased,
    base: SerialSplitContext,
    out: Fragment,
    /// The callees run in place around the phases being written, the
    /// innermost last (a callee's callee): each one's name, parameters,
    /// body and call (`Step::Call::scope`).
    calls: Vec<Call<'a>>,
}

#[derive(Clone, Copy)]
struct Call<'a> {
    callee: &'a str,
    binds: &'a [Bind],
    scope: usize,
}

/// The serial version of `plan`'s child, split at its barriers.
pub(super) fn serial_split(
    r: &Renderer,
    plan: &ChildPlan,
    phased: &Phased,
    name: String,
    template_header: String,
    params: String,
) -> Fragment {
    let child = &r.program.functions[plan.child];
    let kept: Vec<SplitVar> = phased
        .vars
        .iter()
        .enumerate()
        .filter_map(|(index, v)| {
            let (storage, array, param) = match &v.keep {
                Keep::Recompute { .. } => return None,
                Keep::Store { storage, array, .. } => (storage.clone(), array.clone(), false),
                Keep::Param { storage, bound_in } => {
                    (storage.clone(), String::new(), bound_in.is_none())
                }
            };
            Some(SplitVar {
                index,
                name: v.name.clone(),
                storage,
                array,
                param,
            })
        })
        .collect();
    let base = SerialSplitContext {
        part: "head",
        child: child.name.clone(),
        name,
        template_header,
        recursive: plan.recursive,
        params,
        barriers: phased.barriers,
        shared: !phased.shared.is_empty(),
        bound: phased.bound,
        dynamic_shared: phased.dynamic_shared,
        atomics: !phased.atomics.is_empty(),
        element: String::new(),
        shared_name: String::new(),
        kept,
        refs: Vec::new(),
        callee_refs: Vec::new(),
        done: phased.done_flags,
        block_done: phased.block_done,
        phase: 0,
        label: false,
        line: 0,
        file: String::new(),
        line_out: super::OUTPUT_LINE_MARKER,
        callee: String::new(),
        index: 0,
        binds: Vec::new(),
        result_call: 0,
        result_target: String::new(),
        votes: phased.votes.iter().enumerate().map(split_vote).collect(),
        vote: None,
        exchanges: !phased.exchanges.is_empty(),
        tiles: phased.exchanges.iter().any(|x| x.tile.is_some()),
        exchange: None,
        stored: !phased.exchanges.is_empty() && (phased.done_flags || phased.guards > 0),
        guard_count: phased.guards,
        guards: Vec::new(),
        guard: None,
    };
    // A recursive child's own launches in it are made as written.
    let split_renderer = r.for_split().with_instances(&phased.instances);
    let mut s = Split {
        r: &split_renderer,
        plan,
        phased,
        base,
        out: Fragment::default(),
        calls: Vec::new(),
    };
    s.part("head");
    for shared in &phased.shared {
        match &shared.dynamic {
            None => {
                let dropped: Vec<(Span, String)> = std::iter::once(shared.keyword)
                    .chain(shared.statics.iter().copied())
                    .map(|k| (k, String::new()))
                    .collect();
                s.user(shared.statement, &dropped);
                s.out.generated(b"\n");
            }
            Some((element, name)) => {
                s.base.element = element.clone();
                s.base.shared_name = name.clone();
                s.part("dynamic_shared");
            }
        }
    }
    s.part("block_start");
    s.steps(&phased.steps);
    s.part("tail");
    s.out
}

impl<'a> Split<'a, '_> {
    fn render(&self, part: &'static str) -> String {
        let mut ctx = self.base.clone();
        ctx.part = part;
        let mut text = self.r.templates.render(&ctx);
        if !text.ends_with('\n')
            && !matches!(
                part,
                "return"
                    | "arg_open"
                    | "block_arg_open"
                    | "vote_open"
                    | "exchange_open"
                    | "exchange_call"
                    | "guard_open"
                    | "open_brace"
            )
        {
            text.push('\n');
        }
        text
    }

    fn part(&mut self, part: &'static str) {
        let text = self.render(part);
        self.out.generated(&super::child::to_output(self.r, &text));
    }

    /// A call's argument (builtins replaced), on the generated line that
    /// binds it.
    fn argument(&mut self, span: Span) {
        self.r
            .render_into(&mut self.out, span, Some(self.plan.child), &[]);
    }

    /// The user's bytes of `span` (builtins replaced), after a `#line`.
    /// Each block vote's call, read as its fold (`dpopt_vote0`).
    fn vote_reads(&self) -> Vec<(Span, String)> {
        self.phased
            .votes
            .iter()
            .enumerate()
            .map(|(i, v)| (v.call, format!("dpopt_vote{i}")))
            .collect()
    }

    /// Each warp exchange's name and `(`, written as its stand-in's, which
    /// reads the slots of the thread's warp.
    fn exchange_reads(&mut self) -> Vec<(Span, String)> {
        let calls: Vec<(Span, SplitExchange)> = self
            .phased
            .exchanges
            .iter()
            .map(|x| (x.opener, split_exchange(x)))
            .collect();
        let reads = calls
            .into_iter()
            .map(|(opener, x)| {
                self.base.exchange = Some(x);
                (opener, self.render("exchange_call"))
            })
            .collect();
        self.base.exchange = None;
        reads
    }

    /// The user's `head` of a construct (`for (...) {`), with an opening
    /// brace of the serial version's own after an unbraced body's head.
    fn head(&mut self, head: Span, overrides: &[(Span, String)]) {
        self.user(head, overrides);
        if !self.r.program.view[head.range()].trim_end().ends_with('{') {
            self.part("open_brace");
        }
    }

    fn user(&mut self, span: Span, overrides: &[(Span, String)]) {
        let (line, file) = self.r.file.line_directive_at(span.start());
        self.base.line = line;
        self.base.file = file;
        self.part("line");
        let overrides: Vec<(Span, String)> = overrides
            .iter()
            .chain(self.r.position_calls())
            .cloned()
            .collect();
        self.r
            .render_into(&mut self.out, span, Some(self.plan.child), &overrides);
    }

    fn steps(&mut self, steps: &'a [Step]) {
        for step in steps {
            match step {
                Step::Phase(p) => self.phase(*p),
                Step::Guard {
                    guard,
                    body,
                    otherwise,
                } => {
                    // each phase of the body runs the threads whose own
                    // condition holds (of the `else`: does not hold)
                    self.base.guards.push(SplitGuard {
                        index: *guard,
                        negate: false,
                    });
                    self.steps(body);
                    self.base.guards.pop();
                    if let Some(otherwise) = otherwise {
                        self.base.guards.push(SplitGuard {
                            index: *guard,
                            negate: true,
                        });
                        self.steps(otherwise);
                        self.base.guards.pop();
                    }
                }
                Step::Leave(statement) => {
                    // `if (i == iteration - 1) break;`, once per block
                    self.user(*statement, &[]);
                    self.out.generated(b"\n");
                }
                Step::Call {
                    scope,
                    callee,
                    body_span,
                    binds,
                    body,
                } => {
                    // The arguments every thread passes alike, bound once
                    // per block around the callee's phases.
                    let program = self.r.program;
                    let in_body = |b: &&Bind| names(program, *body_span, &b.name);
                    let block: Vec<&Bind> =
                        binds.iter().filter(|b| b.block).filter(in_body).collect();
                    self.base.callee = callee.clone();
                    if block.is_empty() {
                        // the callee's variables computed once per block
                        // stay in its own scope
                        self.part("call_open");
                    } else {
                        self.part("block_binds_open");
                        for (index, b) in block.iter().enumerate() {
                            self.base.index = index;
                            self.part("block_arg_open");
                            if b.group {
                                self.part("group_arg");
                            } else {
                                self.argument(b.arg);
                            }
                            self.part("arg_close");
                        }
                        self.base.binds = split_binds(&block);
                        self.part("block_binds");
                    }
                    self.calls.push(Call {
                        callee: callee.as_str(),
                        binds: binds.as_slice(),
                        scope: *scope,
                    });
                    self.steps(body);
                    self.calls.pop();
                    self.base.callee = callee.clone();
                    self.part(if block.is_empty() {
                        "call_close"
                    } else {
                        "block_binds_close"
                    });
                }
                Step::Construct {
                    head,
                    body,
                    otherwise,
                    tail,
                } => {
                    // a block vote in the head reads its fold
                    let votes = self.vote_reads();
                    self.head(*head, &votes);
                    self.steps(body);
                    self.part("close");
                    if let Some(tail) = tail {
                        // a `do` loop's `while (...);`
                        self.user(*tail, &votes);
                        self.out.generated(b"\n");
                    }
                    if let Some((word, body)) = otherwise {
                        self.head(*word, &[]);
                        self.steps(body);
                        self.part("close");
                    }
                }
            }
        }
    }

    fn phase(&mut self, p: usize) {
        let phase = &self.phased.phases[p];
        self.base.phase = p;
        self.base.label = !phase.returns.is_empty();
        let done = self.base.done;
        // `return` leaves the thread's phase; with flags, every later one.
        self.base.done = done && !phase.last;
        let ret = self.render("return").trim_end().to_string();
        self.base.done = done;
        let mut overrides: Vec<(Span, String)> =
            phase.returns.iter().map(|&r| (r, ret.clone())).collect();
        overrides.extend(self.phased.atomics.iter().map(|&a| {
            let name = &self.r.program.view[a.range()];
            (a, format!("dpopt_serial_{name}"))
        }));
        overrides.extend(self.phased.shared.iter().map(|s| {
            (
                s.statement,
                "/* dpopt: __shared__, an array of each block's run */".to_string(),
            )
        }));
        // a block vote in a statement reads the fold of the phase before,
        // a warp exchange the slots the phase before stored
        overrides.extend(self.vote_reads());
        let exchanges = self.exchange_reads();
        overrides.extend(exchanges);
        // Each variable's level: the child's body (0), then each callee run
        // in place around the phase, the innermost last.
        let calls = self.calls.clone();
        let level_of = |scope: crate::barrier_split::Scope| match scope {
            None => Some(0),
            Some(k) => calls.iter().position(|c| c.scope == k).map(|l| l + 1),
        };
        let levels = calls.len() + 1;
        let mut recompute: Vec<Vec<Span>> = vec![Vec::new(); levels];
        // the kept variables of each level, after its parameters (which
        // may hide the caller's names)
        let mut refs: Vec<Vec<SplitVar>> = vec![Vec::new(); levels];
        // A variable computed again in later phases that its own phase does
        // not read after its declaration: `(void)name;` after it (nvcc warns
        // of a variable declared and never referenced).
        let mut unread: Vec<(Span, String)> = Vec::new();
        for (index, v) in self.phased.vars.iter().enumerate() {
            let here = v.declared_in == Some(p);
            let used = v.used_in.contains(&p);
            let kept = self.base.kept.iter().find(|k| k.index == index).cloned();
            let Some(level) = level_of(v.scope) else {
                continue;
            };
            match &v.keep {
                Keep::Recompute { declaration }
                    if used && !here && !recompute[level].contains(declaration) =>
                {
                    recompute[level].push(*declaration);
                }
                Keep::Recompute { declaration } if here => {
                    let after = Span::from(declaration.end()..phase.range.end());
                    let view = &self.r.program.view;
                    if phase.range.contains(declaration.start())
                        && view[declaration.range()].ends_with(';')
                        && !names(self.r.program, after, &v.name)
                    {
                        let semicolon = Span::from(declaration.end() - 1..declaration.end());
                        match unread.iter_mut().find(|(s, _)| *s == semicolon) {
                            Some((_, text)) => text.push_str(&format!(" (void){};", v.name)),
                            None => unread.push((semicolon, format!("; (void){};", v.name))),
                        }
                    }
                }
                Keep::Store { rewrites, .. } if here => {
                    overrides.extend(rewrites.iter().cloned());
                    refs[level].extend(kept);
                }
                Keep::Store { .. } | Keep::Param { .. } if used => {
                    refs[level].extend(kept);
                }
                _ => {}
            }
        }
        overrides.extend(unread);
        // in the order of the source, where each comes after those it reads
        for r in &mut recompute {
            r.sort_by_key(|d| d.start());
        }
        self.base.refs = std::mem::take(&mut refs[0]);
        if let Some((span, with)) = &phase.result {
            overrides.push((*span, with.clone()));
        }
        // Variables computed once per block, before the phase's threads.
        for u in self.phased.uniform.iter().filter(|u| u.phase == p) {
            self.part("uniform");
            match &u.declaration {
                BlockDeclaration::Statement(declaration) => {
                    let votes = self.vote_reads();
                    self.user(*declaration, &votes);
                }
                BlockDeclaration::Declarator(text) => self.out.generated(text.as_bytes()),
            }
            self.out.generated(b"\n");
            overrides.extend(u.rewrites.iter().cloned());
        }
        self.base.vote = phase.vote.map(|v| split_vote((v, &self.phased.votes[v])));
        if self.base.vote.is_some() {
            self.part("vote_reset");
        }
        self.base.exchange = phase
            .exchange
            .map(|x| split_exchange(&self.phased.exchanges[x]));
        self.part("phase_open");
        // The parameters each callee binds in this phase: those the phase
        // names (its own bytes, the callee's declarations it computes again,
        // the arguments its own callee binds here), the innermost first.
        // A parameter the callee assigns is bound in its first phase only,
        // to the thread's kept copy, which later phases read.
        let copy = |b: &Bind, scope: usize| {
            self.phased.vars.iter().position(|v| {
                v.name == b.name
                    && v.scope == Some(scope)
                    && matches!(v.keep, Keep::Param { bound_in: Some(q), .. } if q == p)
            })
        };
        let mut bound: Vec<Vec<&Bind>> = vec![Vec::new(); calls.len()];
        let mut inner_args: Vec<Span> = Vec::new();
        for (l, call) in calls.iter().enumerate().rev() {
            let ranges: Vec<Span> = std::iter::once(phase.range)
                .chain(recompute[l + 1].iter().copied())
                .chain(inner_args.iter().copied())
                .collect();
            let named = |b: &&Bind| {
                ranges
                    .iter()
                    .any(|&range| names(self.r.program, range, &b.name))
            };
            bound[l] = call
                .binds
                .iter()
                .filter(|b| !b.block)
                .filter(|b| {
                    if b.assigned {
                        copy(b, call.scope).is_some()
                    } else {
                        named(b)
                    }
                })
                .collect();
            inner_args = bound[l].iter().map(|b| b.arg).collect();
        }
        // The caller's recomputed variables, each callee's parameters bound
        // to the arguments (which may name them), then the callee's own.
        for declaration in std::mem::take(&mut recompute[0]) {
            self.user(declaration, &[]);
            self.out.generated(b"\n");
        }
        for (l, call) in calls.iter().enumerate() {
            self.base.callee = call.callee.to_string();
            for r in self
                .phased
                .result_refs
                .iter()
                .filter(|r| r.phase == p && r.call == call.scope)
            {
                self.base.result_call = r.call;
                self.base.result_target = r.target.clone();
                self.part("result_ref");
            }
            let binds = &bound[l];
            for (index, b) in binds.iter().enumerate() {
                self.base.index = index;
                self.part("arg_open");
                self.argument(b.arg);
                self.part("arg_close");
            }
            self.base.binds = split_binds(binds)
                .into_iter()
                .zip(binds)
                .map(|(mut s, b)| {
                    if b.assigned {
                        s.kept = copy(b, call.scope);
                        s.storage = s
                            .kept
                            .and_then(|k| match &self.phased.vars[k].keep {
                                Keep::Param { storage, .. } => Some(storage.clone()),
                                _ => None,
                            })
                            .unwrap_or_default();
                    }
                    s
                })
                .collect();
            self.base.callee_refs = std::mem::take(&mut refs[l + 1]);
            self.part("binds");
            for declaration in std::mem::take(&mut recompute[l + 1]) {
                self.user(declaration, &[]);
                self.out.generated(b"\n");
            }
        }
        // a vote's phase: each thread folds the argument into the result;
        // an exchange's: each stores its value in its slot
        let vote = self.base.vote.is_some();
        let exchange = self.base.exchange.is_some();
        self.base.guard = phase.guard;
        if vote {
            self.part("vote_open");
        }
        if exchange {
            self.part("exchange_open");
        }
        if phase.guard.is_some() {
            self.part("guard_open");
        }
        self.user(phase.range, &overrides);
        if vote {
            self.part("vote_close");
        }
        if exchange {
            self.part("exchange_close");
        }
        if phase.guard.is_some() {
            self.part("guard_close");
        }
        self.base.guard = None;
        self.base.exchange = None;
        for _ in &calls {
            self.part("binds_close");
        }
        self.part("phase_close");
    }
}

fn split_vote((index, v): (usize, &Vote)) -> SplitVote {
    let (init, op) = match v.op {
        VoteOp::Or => ("0", "|="),
        VoteOp::And => ("1", "&="),
        VoteOp::Count => ("0", "+="),
    };
    SplitVote {
        index,
        name: v.op.name(),
        init,
        op,
    }
}

fn split_exchange(x: &Exchange) -> SplitExchange {
    SplitExchange {
        name: match &x.tile {
            Some(size) => format!(
                "thread_block_tile<{}>::{}",
                size.trim_start_matches("(unsigned)").trim_end_matches('u'),
                x.op.stand_in()
            ),
            None => x.op.name().to_string(),
        },
        stand_in: x.op.stand_in(),
        predicate: x.op.predicate(),
        promote: x.op.promote(),
        tile: x.tile.clone().unwrap_or_default(),
    }
}

fn split_binds(binds: &[&Bind]) -> Vec<SplitBind> {
    binds
        .iter()
        .map(|b| SplitBind {
            declaration: b.declaration.clone(),
            name: b.name.clone(),
            kept: None,
            storage: String::new(),
            group: b.group,
        })
        .collect()
}

/// Does `range` name `name` (an identifier token)?
fn names(program: &crate::program::Program, range: Span, name: &str) -> bool {
    program
        .sig_in(range)
        .iter()
        .any(|t| t.kind == crate::token::TokenKind::Ident && t.text(&program.view) == name)
}
