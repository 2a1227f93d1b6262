//! The serial version of a child split at its block barriers
//! (`barrier_split.rs`, `templates/serial_split.cu.tera`): generated parts
//! around the user's bytes of each phase, construct head and shared
//! declaration.

use super::context::{SerialSplitContext, SplitVar};
use super::renderer::Renderer;
use crate::barrier_split::{Keep, Phased, Step};
use crate::plan::ChildPlan;
use crate::source::Span;
use crate::writer::{Fragment, Sink};

struct Split<'a, 'r> {
    r: &'a Renderer<'r>,
    plan: &'a ChildPlan,
    phased: &'a Phased,
    base: SerialSplitContext,
    out: Fragment,
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
                Keep::Param { storage } => (storage.clone(), String::new(), true),
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
        done: phased.done_flags,
        phase: 0,
        label: false,
        line: 0,
        file: String::new(),
        line_out: super::OUTPUT_LINE_MARKER,
    };
    let mut s = Split {
        r,
        plan,
        phased,
        base,
        out: Fragment::default(),
    };
    s.part("head");
    for shared in &phased.shared {
        match &shared.dynamic {
            None => {
                s.user(shared.statement, &[(shared.keyword, String::new())]);
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

impl Split<'_, '_> {
    fn render(&self, part: &'static str) -> String {
        let mut ctx = self.base.clone();
        ctx.part = part;
        let mut text = self.r.templates.render(&ctx);
        if !text.ends_with('\n') && part != "return" {
            text.push('\n');
        }
        text
    }

    fn part(&mut self, part: &'static str) {
        let text = self.render(part);
        self.out.generated(&super::child::to_output(self.r, &text));
    }

    /// The user's bytes of `span` (builtins replaced), after a `#line`.
    fn user(&mut self, span: Span, overrides: &[(Span, String)]) {
        let (line, file) = self.r.file.line_directive_at(span.start());
        self.base.line = line;
        self.base.file = file;
        self.part("line");
        self.r
            .render_into(&mut self.out, span, Some(self.plan.child), overrides);
    }

    fn steps(&mut self, steps: &[Step]) {
        for step in steps {
            match step {
                Step::Phase(p) => self.phase(*p),
                Step::Construct {
                    head,
                    body,
                    otherwise,
                } => {
                    self.user(*head, &[]);
                    self.steps(body);
                    self.part("close");
                    if let Some((word, body)) = otherwise {
                        self.user(*word, &[]);
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
        let mut recompute = Vec::new();
        self.base.refs = Vec::new();
        for (index, v) in self.phased.vars.iter().enumerate() {
            let here = v.declared_in == Some(p);
            let used = v.used_in.contains(&p);
            let kept = |s: &Self| s.base.kept.iter().find(|k| k.index == index).cloned();
            match &v.keep {
                Keep::Recompute { declaration }
                    if used && !here && !recompute.contains(declaration) =>
                {
                    recompute.push(*declaration);
                }
                Keep::Store { replace, with, .. } if here => {
                    overrides.push((*replace, with.clone()));
                    self.base.refs.extend(kept(self));
                }
                Keep::Store { .. } | Keep::Param { .. } if used => {
                    self.base.refs.extend(kept(self));
                }
                _ => {}
            }
        }
        self.part("phase_open");
        for declaration in recompute {
            self.user(declaration, &[]);
            self.out.generated(b"\n");
        }
        self.user(phase.range, &overrides);
        self.part("phase_close");
    }
}
