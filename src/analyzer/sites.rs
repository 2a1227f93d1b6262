//! Site resolution: a pragma's launch, parent and child (resolved as C++
//! looks names up), the site's clause values, its thread count and the
//! warnings about them.

use super::varying::{parent_params_uniform, varying_arguments};
use crate::constant::Constants;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::plan::{Aggregation, Floor, FloorThreads, Site, DEFAULT_POOL_RECORDS};
use crate::pragma::{ClauseValue, Directive, Lands, Takes, Value, MAX_BLOCK_THREADS};
use crate::program::{FunctionId, LaunchId, PragmaId, Program, Resolution};
use crate::source::SourceFile;
use crate::source::Span;
use crate::thread_count::{thread_count, CountSource, ThreadCount};
use std::collections::BTreeMap;

/// A pragma's launch, the function holding it and the kernel it launches.
pub(super) struct Resolved {
    /// Index into `Program::launches`.
    pub(super) launch: LaunchId,
    pub(super) parent: FunctionId,
    pub(super) child: FunctionId,
    /// Other definitions of the child in other branches of an `#if` group.
    pub(super) alternatives: Vec<FunctionId>,
}

/// Resolve one pragma to its launch, parent and child, and read the site's
/// clause values.
pub(super) fn site_for(
    file: &SourceFile,
    program: &Program,
    index: PragmaId,
    directive: Directive,
    per_parent: &mut BTreeMap<String, usize>,
    constants: &Constants,
) -> Result<(Site, Vec<Diagnostic>), Diagnostic> {
    let view = &file.view;
    let pragma = &program.pragmas[index];
    let Resolved {
        launch: launch_index,
        parent,
        child,
        alternatives,
    } = resolve(file, program, index)?;
    let launch = &program.launches[launch_index];
    let parent_fn = &program.functions[parent];
    let child_fn = &program.functions[child];
    let simple_name = launch.simple_name();
    // A literal above a clause's limit is refused by the parse; a macro the
    // file defines, here.
    for clause in &directive.clauses {
        let (
            ClauseValue::Positive(Value::Macro(name)),
            Takes::Positive {
                max: Some(limit), ..
            },
        ) = (&clause.value, clause.name.takes())
        else {
            continue;
        };
        if let Some(n) = constants.value(name).filter(|&n| n > i128::from(limit.max)) {
            return Err(Diagnostic::new(
                DiagnosticKind::AboveLimit {
                    clause: clause.name.spelling().to_string(),
                    value: name.clone(),
                    limit: limit.max,
                },
                clause.span,
                format!("`{name}` is {n} here"),
            ));
        }
    }
    let k = per_parent.entry(parent_fn.symbol.clone()).or_insert(0);
    *k += 1;
    let id = format!("{}_{}", parent_fn.symbol, k);
    let aggregation = directive.aggregation().map(|granularity| Aggregation {
        varying: varying_arguments(
            program,
            launch,
            parent,
            child_fn,
            directive.work(),
            parent_params_uniform(program, parent, granularity),
        ),
        asserted: directive.work().is_some(),
        ..Aggregation::defaulted(
            granularity,
            site_is_recursive(program, parent, child),
            directive.group().cloned(),
            directive.pool_records().cloned(),
        )
    });
    // `floor` with its default work list; `floor(N)` lands below.
    let floor = match directive.floor() {
        None => None,
        Some(_) => Some(floor_of(program, launch, parent, simple_name, constants)?),
    };
    let mut site = Site {
        aggregation,
        floor,
        id: id.clone(),
        summary: directive.summary(),
        pragma: index,
        launch: launch_index,
        parent,
        child,
        alternatives,
        threshold: None,
        coarsen: None,
        count: None,
        kernel_clauses: Vec::new(),
        alloc_clause: directive.alloc(),
        allocations: Vec::new(),
        allocations_left: Vec::new(),
        knobs: Vec::new(),
    };
    // Each positive-integer clause where its row says it lands.
    for clause in &directive.clauses {
        let (
            ClauseValue::Positive(value),
            Takes::Positive { lands, .. } | Takes::OptionalPositive { lands },
        ) = (&clause.value, clause.name.takes())
        else {
            continue;
        };
        match lands {
            Lands::Site(set) => set(&mut site, value.clone()),
            Lands::Aggregation(set) => {
                // The clause needs `consldt` (checked by the parse).
                if let Some(a) = &mut site.aggregation {
                    set(a, value.clone());
                }
            }
            Lands::Kernel { .. } => site.kernel_clauses.push((clause.name, value.clone())),
        }
    }
    let mut warnings = Vec::new();
    site.count = site
        .threshold
        .as_ref()
        .map(|_| match directive.child_threads() {
            Some(e) => ThreadCount::Explicit(e.to_string()),
            None => {
                let tc = thread_count(program, launch, parent);
                // Without a division in the grid size, grid x block threads is
                // the exact count (literals, macros, dim3 variables, builtins):
                // only a rounding that was not recognised is worth a word.
                let grid_text = &view[launch.config[0].range()];
                let rounds = grid_text.contains('/')
                    || grid_text.contains(">>")
                    || grid_text.contains("ceil");
                if tc == ThreadCount::Fallback && rounds {
                    warnings.push(
                        Diagnostic::new(
                            DiagnosticKind::ThreadCountFallback {
                                kernel: simple_name.to_string(),
                            },
                            launch.config[0],
                            "no ceiling division found in this grid size",
                        )
                        .with_note(pragma.span, "threshold requested here"),
                    );
                }
                tc
            }
        });
    if let (Some(t), Some(count)) = (&site.threshold, &site.count) {
        let threshold_value = match t {
            Value::Literal(n) => Some(*n as i128),
            Value::Macro(m) => constants.value(m),
        };
        let parent_fn = &program.functions[parent];
        let threads = |r: &Span| constants.threads(&view[r.range()], parent_fn, program);
        let count_value = match count {
            ThreadCount::Explicit(e) => constants.value(e),
            ThreadCount::Factors(sources) => sources.iter().try_fold(1i128, |acc, s| {
                let v = match s {
                    CountSource::InGrid(r) | CountSource::Reevaluated(r) => {
                        constants.value(&view[r.range()])
                    }
                    CountSource::BlocksTimesBlockDim(_) => None,
                }?;
                acc.checked_mul(v)
            }),
            ThreadCount::Fallback => threads(&launch.config[0])
                .zip(launch.config.get(1).and_then(threads))
                .and_then(|(g, b)| g.checked_mul(b)),
        };
        if let (Some(th), Some(n)) = (threshold_value, count_value) {
            warnings.push(
                Diagnostic::new(
                    DiagnosticKind::ThresholdDecided {
                        kernel: simple_name.to_string(),
                        threads: n,
                        threshold: th,
                        site: id.clone(),
                    },
                    launch.config_span,
                    format!("always {n} child threads"),
                )
                .with_note(pragma.span, "threshold requested here"),
            );
        }
    }
    Ok((site, warnings))
}

/// The launch after pragma `index`, the function holding it and the kernel
/// it launches (resolved as C++ looks names up), or why there is none.
pub(super) fn resolve(
    file: &SourceFile,
    program: &Program,
    index: PragmaId,
) -> Result<Resolved, Diagnostic> {
    let view = &file.view;
    let pragma = &program.pragmas[index];
    let Some(next) = pragma.next_token else {
        return Err(Diagnostic::new(
            DiagnosticKind::NoLaunchAfterPragma {
                found: "end of file".into(),
            },
            pragma.span,
            "nothing follows this pragma",
        ));
    };
    let next_token = program.sig[next.0];
    if program
        .pragmas
        .binary_search_by_key(&next, |p| p.token)
        .is_ok()
    {
        return Err(Diagnostic::new(
            DiagnosticKind::DuplicatePragma,
            next_token.range(),
            "second pragma",
        )
        .with_note(pragma.span, "first pragma"));
    }
    let Some(launch_index) = program
        .launches
        .binary_search_by_key(&next, |l| l.first_token)
        .ok()
    else {
        let following = program.sig_in(next_token.start..view.len());
        let end = following[..following.len().min(6)]
            .last()
            .map_or(next_token.end, |t| t.end);
        let found: String = view[next_token.start..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        return Err(Diagnostic::new(
            DiagnosticKind::NoLaunchAfterPragma { found },
            next_token.range(),
            "expected `kernel<<<grid, block>>>(args);` here",
        )
        .with_note(pragma.span, "this pragma"));
    };
    let launch = &program.launches[launch_index];
    let Some(parent) = launch.function else {
        return Err(Diagnostic::new(
            DiagnosticKind::LaunchOutsideFunction,
            launch.span,
            "this launch",
        ));
    };
    let parent_fn = &program.functions[parent];
    if !parent_fn.space.runs_on_device() {
        return Err(Diagnostic::new(
            DiagnosticKind::HostSideLaunch {
                function: parent_fn.name.clone(),
            },
            launch.span,
            "launched from the host",
        )
        .with_note(parent_fn.name_span, "host function"));
    }
    if launch.config.len() < 2 || launch.config.len() > 4 {
        return Err(Diagnostic::new(
            DiagnosticKind::MalformedLaunch {
                reason: format!(
                    "{} configuration argument(s), expected 2 to 4",
                    launch.config.len()
                ),
            },
            launch.config_span,
            "configuration",
        ));
    }
    let simple_name = launch.simple_name();
    let resolution = match program.resolve(
        &launch.kernel,
        Some(parent),
        launch.span.start(),
        Some(launch.args.len()),
    ) {
        // A definition in the unit itself (the input and its headers) wins
        // over one in a `--child-source` file (another translation unit).
        Resolution::Ambiguous(candidates) => {
            let in_unit = |&c: &FunctionId| {
                file.part_at(program.functions[c].start)
                    .map_or(true, |p| p.origin == crate::source::Origin::Header)
            };
            let own: Vec<FunctionId> = candidates.iter().copied().filter(in_unit).collect();
            match own.as_slice() {
                [] => Resolution::Ambiguous(candidates),
                [one] => Resolution::Found(*one),
                _ => Resolution::Ambiguous(own),
            }
        }
        other => other,
    };
    let (child, alternatives) = match resolution {
        Resolution::Found(child) => (child, Vec::new()),
        Resolution::NotFound => {
            return Err(Diagnostic::new(
                DiagnosticKind::KernelNotDefined {
                    kernel: launch.kernel.split_whitespace().collect(),
                    searched: file.searched.clone(),
                },
                launch.kernel_span,
                "no definition of this kernel found",
            ))
        }
        Resolution::Ambiguous(candidates) => {
            // Definitions in different branches of `#if` groups: each one
            // gets the generated code it needs, in its own branch.
            let pairwise_exclusive = candidates
                .iter()
                .enumerate()
                .all(|(i, &a)| candidates[i + 1..].iter().all(|&b| program.exclusive(a, b)));
            if !pairwise_exclusive {
                let mut d = Diagnostic::new(
                    DiagnosticKind::AmbiguousKernel {
                        kernel: launch.kernel.split_whitespace().collect(),
                        count: candidates.len(),
                        arity: launch.args.len(),
                    },
                    launch.kernel_span,
                    "which one?",
                );
                for &c in &candidates {
                    let f = &program.functions[c];
                    d = d.with_note(f.name_span, format!("`{}`", f.qualified_name()));
                }
                return Err(d);
            }
            (candidates[0], candidates[1..].to_vec())
        }
    };
    let child_fn = &program.functions[child];
    if let Some(&other) = alternatives
        .iter()
        .find(|&&a| !file.in_input(program.functions[a].start) || !file.in_input(child_fn.start))
    {
        // Code for a child of another file goes to one place of the input,
        // outside the `#if` branches it is defined in.
        return Err(Diagnostic::new(
            DiagnosticKind::AmbiguousKernel {
                kernel: launch.kernel.split_whitespace().collect(),
                count: alternatives.len() + 1,
                arity: launch.args.len(),
            },
            launch.kernel_span,
            "defined in `#if` branches of another file",
        )
        .with_note(child_fn.name_span, "one definition")
        .with_note(program.functions[other].name_span, "another"));
    }
    if let Some(&other) = alternatives.iter().find(|&&a| {
        let f = &program.functions[a];
        f.space.global != child_fn.space.global
            || f.template_params.iter().any(|t| t.is_pack)
            || f.template_header.is_some() != child_fn.template_header.is_some()
    }) {
        return Err(Diagnostic::new(
            DiagnosticKind::AmbiguousKernel {
                kernel: launch.kernel.split_whitespace().collect(),
                count: alternatives.len() + 1,
                arity: launch.args.len(),
            },
            launch.kernel_span,
            "its definitions differ in kind",
        )
        .with_note(child_fn.name_span, "one definition")
        .with_note(program.functions[other].name_span, "another"));
    }
    if !child_fn.space.global {
        return Err(Diagnostic::new(
            DiagnosticKind::NotAKernel {
                kernel: simple_name.to_string(),
            },
            launch.kernel_span,
            "not a kernel",
        )
        .with_note(child_fn.name_span, "defined here"));
    }
    if child_fn.template_params.iter().any(|t| t.is_pack) {
        return Err(Diagnostic::new(
            DiagnosticKind::VariadicTemplate {
                kernel: simple_name.to_string(),
            },
            launch.kernel_span,
            "variadic kernel",
        ));
    }
    if let Some(d) = hidden_helper(file, program, launch, child) {
        return Err(d);
    }
    Ok(Resolved {
        launch: launch_index,
        parent,
        child,
        alternatives,
    })
}

/// A child of a `--child-source` file (another translation unit) whose body
/// calls a function of that file that the output cannot call: the body is
/// copied into the output, where a `static` or `inline` function of the
/// other file (its own copy there), a template or one in an anonymous
/// namespace does not exist, and any other one only where the input
/// declares it. Without this, nvcc would reject the output
/// (`identifier "helper" is undefined`), or the copy would call another
/// function of the same name.
fn hidden_helper(
    file: &SourceFile,
    program: &Program,
    launch: &crate::program::Launch,
    child: FunctionId,
) -> Option<Diagnostic> {
    let other_unit = |offset: usize| {
        file.part_at(offset)
            .is_some_and(|p| p.origin == crate::source::Origin::ChildSource)
    };
    let child_fn = &program.functions[child];
    if !other_unit(child_fn.start) {
        return None;
    }
    let view = file.view.as_str();
    let body = &program.sig[child_fn.body_tokens.clone()];
    for (i, name) in crate::token::calls(body, view) {
        let member = i > 0 && matches!(body[i - 1].text(view), "." | "->" | "::");
        if member {
            continue;
        }
        for (_, f) in program
            .functions
            .with_ids()
            .filter(|(_, f)| f.name == name && other_unit(f.start))
        {
            let head: Vec<&str> = view[f.start..f.name_span.start()]
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .collect();
            let (why, declarable) = if f.namespace.iter().any(String::is_empty) {
                ("it is in an anonymous namespace there".to_string(), false)
            } else if head.contains(&"static") {
                ("it is `static` there".to_string(), false)
            } else if let Some(w) = head
                .iter()
                .find(|w| matches!(**w, "inline" | "__inline__" | "__forceinline__"))
            {
                (
                    format!("it is `{w}` there, so only files that define it can call it"),
                    false,
                )
            } else if f.template_header.is_some() {
                (
                    "it is a template there, which the output cannot instantiate".to_string(),
                    false,
                )
            } else if other_unit(f.first_declared) {
                ("this file does not declare it".to_string(), true)
            } else {
                continue;
            };
            let (defining, _) = file.local(f.start);
            return Some(
                Diagnostic::new(
                    DiagnosticKind::ChildHelperHidden {
                        kernel: child_fn.name.clone(),
                        helper: name.to_string(),
                        file: defining.name.clone(),
                        why,
                        declarable,
                    },
                    launch.kernel_span,
                    "its body would be copied into the output",
                )
                .with_note(body[i].span(), format!("calls `{name}`"))
                .with_note(f.name_span, format!("`{name}` defined here")),
            );
        }
    }
    None
}

/// The launch is part of a recursion: the child launches itself, or the
/// parent is the child.
pub(super) fn site_is_recursive(program: &Program, parent: FunctionId, child: FunctionId) -> bool {
    parent == child
        || program
            .launches
            .iter()
            .any(|l| l.function == Some(child) && program.launched_kernels(l).contains(&child))
}

/// The floor of a site with the default work list: the drain's threads (the
/// child's block size when it is a constant) and its shared memory, which
/// the host sets when it launches the drain: a constant or nothing.
fn floor_of(
    program: &Program,
    launch: &crate::program::Launch,
    parent: FunctionId,
    kernel: &str,
    constants: &Constants,
) -> Result<Floor, Diagnostic> {
    let view = program.view.as_str();
    let parent_fn = &program.functions[parent];
    let threads = match constants.threads(&view[launch.config[1].range()], parent_fn, program) {
        Some(n) if (1..=i128::from(MAX_BLOCK_THREADS)).contains(&n) => {
            FloorThreads::Exact(n as u64)
        }
        _ => FloorThreads::Loop,
    };
    let smem = match launch.config.get(2) {
        None => None,
        Some(r) => match constants.value(&view[r.range()]) {
            Some(0) => None,
            Some(n) if n > 0 => Some(n.to_string()),
            _ => {
                return Err(Diagnostic::new(
                    DiagnosticKind::FloorRefused {
                        kernel: parent_fn.name.clone(),
                        why: format!(
                            "the launch of `{kernel}` passes dynamic shared memory that is not a constant, and the drain grid gets its shared memory when the host launches it"
                        ),
                        fix: "give the launch a constant shared-memory size (a literal or a macro the file defines), or remove `floor`".to_string(),
                    },
                    *r,
                    "not a constant",
                ))
            }
        },
    };
    Ok(Floor {
        records: Value::Literal(DEFAULT_POOL_RECORDS),
        threads,
        smem,
        join: false,
        recursive: false,
        wide: false,
    })
}
