//! `dpopt explain`: per launch site, in plain words and as JSON, what the
//! transformation does, read from the analyzer's `Plan` (never recomputed):
//! the child's thread count compared with the threshold, what runs
//! serially, what aggregation stores per parent and passes once, the pool,
//! the aggregated grid's configuration, the knobs with their values, and the
//! checks the site passed.

use crate::plan::{Aggregation, Plan, PromoteSite, Site, DEFAULT_SERIAL_DEPTH};
use crate::pragma::{Granularity, Promotion};
use crate::program::Program;
use crate::source::SourceFile;
use crate::thread_count::{CountSource, ThreadCount};
use crate::{analyzer, lexer, parser, unit};
use serde::Serialize;

/// The explanations of one file's sites, in source order.
#[derive(Debug, Serialize)]
pub struct Explanation {
    pub file: String,
    pub sites: Vec<SiteExplanation>,
}

/// One site.
#[derive(Debug, Serialize)]
pub struct SiteExplanation {
    pub file: String,
    pub site: String,
    pub line: usize,
    pub column: usize,
    pub pragma: String,
    pub parent: String,
    pub child: String,
    /// Where the child is defined (`FILE:LINE:COL`).
    pub child_defined_at: String,
    pub threshold: Option<Threshold>,
    pub coarsen: Option<Coarsen>,
    pub aggregation: Option<AggregationFacts>,
    /// `floor`: the launch-free copy of the parent and the site's drain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor: Option<FloorFacts>,
    /// A promoted launch (`promote(...)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promotion: Option<PromotionFacts>,
    /// What runs in the parent thread instead of a launch.
    pub serialized: Vec<String>,
    pub knobs: Vec<Knob>,
    /// The checks this site passed.
    pub checks: Vec<String>,
    /// The parent's allocations of the launch's pointers: aggregated, or
    /// left per thread and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allocations: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Threshold {
    pub value: String,
    /// The child's thread count compared with the threshold, as C source.
    pub child_threads: String,
    /// Where that count comes from.
    pub from: String,
}

#[derive(Debug, Serialize)]
pub struct Coarsen {
    pub factor: String,
}

#[derive(Debug, Serialize)]
pub struct AggregationFacts {
    pub granularity: &'static str,
    /// Launch arguments stored once per parent launch (they vary).
    pub per_parent: Vec<String>,
    /// Launch arguments passed once per aggregated launch.
    pub passed_once: Vec<String>,
    /// The arguments passed once are only asserted invariant (`work(...)`).
    pub asserted: bool,
    pub agg_threshold: Option<String>,
    /// Parent blocks per group (multiblock).
    pub group: Option<String>,
    /// The static pool (grid, multiblock): records, and pools.
    pub pool_records: Option<String>,
    pub pools: Option<usize>,
    pub grid: String,
    pub block: String,
}

#[derive(Debug, Serialize)]
pub struct FloorFacts {
    /// The launch-free copy of the parent and the host function its host
    /// launches call.
    pub copy: String,
    pub launcher: String,
    /// Host launches of the parent in the file, rewritten (`FILE:LINE:COL`).
    pub host_launches: Vec<String>,
    /// Records in the work list.
    pub records: String,
    /// The drain grid's blocks.
    pub block: String,
    /// The knob that makes the copy's blocks run the children they
    /// recorded (1 by default), where the child allows it.
    pub join: Option<String>,
    /// The child is the kernel itself: the drain runs a queue that its
    /// blocks add the next levels to.
    pub recursive: bool,
}

/// How a promoted chain runs.
#[derive(Debug, Serialize)]
pub struct PromotionFacts {
    /// `basic` or `aggregate`.
    pub kind: &'static str,
    /// How the steps run, in words.
    pub steps: String,
    /// Where a promoted step waits for its predecessor's release.
    pub waits: String,
    /// The launch's arguments the next step gets when the step starts, and
    /// those the step computes (passed at the release).
    pub early: Vec<String>,
    pub at_release: Vec<String>,
}

/// A macro that retunes the site when nvcc compiles the output.
#[derive(Debug, Serialize)]
pub struct Knob {
    pub name: String,
    pub value: String,
    pub meaning: &'static str,
}

/// Explain every site of `input` (with the files `options` names). A file
/// with errors explains the sites that have no error.
pub fn explain(input: &SourceFile, options: Option<&unit::Options>) -> Explanation {
    let (file, tokens) = match options {
        Some(options) => {
            let unit = unit::load(input, options);
            (unit.file, unit.tokens)
        }
        None => (input.clone(), lexer::lex(input)),
    };
    let mut program = parser::parse(&file, tokens);
    if let Some(options) = options {
        program.defines = options.defines.clone();
    }
    program.pragmas.retain(|p| file.in_input(p.span.start()));
    let analysis = analyzer::analyze(&file, &program);
    Explanation {
        file: input.name.clone(),
        sites: explain_plan(&file, &program, &analysis.plan),
    }
}

/// The explanation of each site of a plan.
pub(crate) fn explain_plan(
    file: &SourceFile,
    program: &Program,
    plan: &Plan,
) -> Vec<SiteExplanation> {
    let mut sites: Vec<(usize, SiteExplanation)> = plan
        .sites
        .iter()
        .map(|site| {
            let at = program.pragmas[site.pragma].span.start();
            (at, explain_site(file, program, plan, site))
        })
        .chain(plan.promotions.iter().map(|p| {
            let at = program.pragmas[p.pragma].span.start();
            (at, explain_promotion(file, program, p))
        }))
        .collect();
    sites.sort_by_key(|(at, _)| *at);
    sites.into_iter().map(|(_, e)| e).collect()
}

fn explain_promotion(file: &SourceFile, program: &Program, site: &PromoteSite) -> SiteExplanation {
    let pragma_at = program.pragmas[site.pragma].span.start();
    let (line, column) = file.local(pragma_at).0.line_col(file.local(pragma_at).1);
    let kernel = &program.functions[site.kernel];
    let names = |early: bool| -> Vec<String> {
        site.members
            .iter()
            .zip(&site.early)
            .filter(|(_, &e)| e == early)
            .map(|(m, _)| m.name.clone())
            .collect()
    };
    let (kind, steps) = match site.kind {
        Promotion::Basic => (
            "basic",
            "each step is a grid of one block, launched when its predecessor starts (at most DPOPT_PROMOTE_AHEAD steps ahead of the released one); a chain nests one launch per step, as plain CDP does".to_string(),
        ),
        Promotion::Aggregate => (
            "aggregate",
            format!(
                "the chain's head launches a pool of {} blocks once; each takes the next step when it is free, in the order blocks start, so a chain of any length nests one launch",
                site.pool.to_source()
            ),
        ),
    };
    let waits = match site.acquire {
        Some(m) => format!(
            "at `#pragma dp acquire` ({}): the code before it runs before the predecessor's release",
            file.location(program.pragmas[m].span.start())
        ),
        None => "at its start".to_string(),
    };
    let mut checks = vec![
        format!(
            "the launch is `{}`'s launch of itself, of one block, not in a loop, its only launch of itself",
            kernel.qualified_name()
        ),
        "the next step's block size and shared memory are known when the step starts".to_string(),
        format!(
            "no thread of `{}` ends without `return` and it does not synchronize its grid",
            kernel.name
        ),
    ];
    if site.kind == Promotion::Aggregate {
        checks.push(
            "no thread returns early where the block also waits at a barrier, and no called function reads blockIdx or gridDim (a pool block runs one step after another)"
                .to_string(),
        );
    }
    if site.acquire.is_some() {
        checks.push(
            "the code before `#pragma dp acquire` uses only what the step gets when it starts"
                .to_string(),
        );
    }
    SiteExplanation {
        file: file.local(pragma_at).0.name.clone(),
        site: site.id.clone(),
        line,
        column,
        pragma: site.summary.clone(),
        parent: kernel.qualified_name(),
        child: kernel.qualified_name(),
        child_defined_at: file.location(kernel.name_span.start()),
        threshold: None,
        coarsen: None,
        aggregation: None,
        floor: None,
        promotion: Some(PromotionFacts {
            kind,
            steps,
            waits,
            early: names(true),
            at_release: names(false),
        }),
        allocations: Vec::new(),
        serialized: Vec::new(),
        knobs: site
            .knobs
            .iter()
            .map(|k| Knob {
                meaning: k.knob.meaning(),
                name: k.name.clone(),
                value: k.value.clone(),
            })
            .collect(),
        checks,
    }
}

fn granularity_name(g: Granularity) -> &'static str {
    match g {
        Granularity::Warp => "warp",
        Granularity::Block => "block",
        Granularity::MultiBlock => "multiblock",
        Granularity::Grid => "grid",
    }
}

const DIMS: [&str; 3] = ["x", "y", "z"];

fn thread_count(file: &SourceFile, program: &Program, site: &Site) -> (String, String) {
    let launch = &program.launches[site.launch];
    let config = |i: usize| {
        launch
            .config
            .get(i)
            .map_or(String::new(), |r| file.view[r.range()].trim().to_string())
    };
    match &site.count {
        None => (String::new(), String::new()),
        Some(ThreadCount::Explicit(text)) => (text.clone(), "child_threads(...)".into()),
        Some(ThreadCount::Fallback) => (
            format!("({}) x ({})", config(0), config(1)),
            "no pattern recognized: every thread of the grid (grid x block)".into(),
        ),
        Some(ThreadCount::Factors(factors)) => {
            let mut from = Vec::new();
            let text: Vec<String> = factors
                .iter()
                .map(|f| match f {
                    CountSource::InGrid(r) => {
                        from.push("the grid expression");
                        format!("({})", file.view[r.range()].trim())
                    }
                    CountSource::Reevaluated(r) => {
                        from.push("the expression the grid variable was computed from");
                        format!("({})", file.view[r.range()].trim())
                    }
                    CountSource::BlocksTimesBlockDim(d) => {
                        from.push("blocks x block size");
                        let dim = DIMS.get(*d).copied().unwrap_or("x");
                        format!("dim3({}).{dim} * dim3({}).{dim}", config(0), config(1))
                    }
                })
                .collect();
            from.dedup();
            (text.join(" * "), from.join(", "))
        }
    }
}

fn explain_site(file: &SourceFile, program: &Program, plan: &Plan, site: &Site) -> SiteExplanation {
    let pragma_at = program.pragmas[site.pragma].span.start();
    let (line, column) = file.local(pragma_at).0.line_col(file.local(pragma_at).1);
    let child = &program.functions[site.child];
    let parent = &program.functions[site.parent];
    let child_plan = plan.children.iter().find(|c| c.child == site.child);
    let knobs = site
        .knobs
        .iter()
        .map(|k| Knob {
            meaning: k.knob.meaning(),
            name: k.name.clone(),
            value: k.value.clone(),
        })
        .collect();
    let mut serialized = Vec::new();
    let mut checks = vec![
        format!(
            "the launch is device-side, in `{}`, a function at namespace level",
            parent.qualified_name()
        ),
        format!(
            "`{}` is a `__global__` kernel whose body dpopt reads ({})",
            child.qualified_name(),
            file.location(child.name_span.start())
        ),
    ];
    let phased = child_plan.and_then(|c| c.phased.as_ref());
    let threshold = site.threshold.as_ref().map(|v| {
        let (child_threads, from) = thread_count(file, program, site);
        serialized.push(match phased {
            None => format!(
                "a launch with fewer than {} threads runs `dpopt_serial_{}` in the parent thread: every block and thread of the child's grid, one after the other",
                v.to_source(),
                child.name
            ),
            Some(p) => format!(
                "a launch with fewer than {} threads runs `dpopt_serial_{}` in the parent thread: block after block, the child's body split at its barriers into {} stretches, each run for every thread of the block before the next ({} shared array(s) local to each block's run, {} variable(s) or parameter(s) kept per thread{})",
                v.to_source(),
                child.name,
                p.stretches(),
                p.shared.len(),
                p.vars.iter().filter(|v| !matches!(v.keep, crate::barrier_split::Keep::Recompute { .. })).count(),
                p.bound.map_or(String::new(), |b| format!(", for up to {b} threads per block")),
            ) + &inlined_and_uniform(program, p),
        });
        checks.push(match phased {
            None => format!(
                "`{}` can run serially in one parent thread: no block barrier, warp operation, grid synchronization, shared memory, `asm(\"exit;\")` or position read outside the four builtins, in it or in any function it calls",
                child.name
            ),
            Some(_) => format!(
                "`{}` can run serially split at its barriers: every barrier a `__syncthreads();` statement every thread of the block reaches alike, shared memory declared with a constant size (in its body, or in a callee called as a statement, run in place), no warp operation, grid synchronization, `asm(\"exit;\")` or position read outside the four builtins, in it or in any function it calls",
                child.name
            ),
        });
        checks.push(
            "the functions the child calls do not read threadIdx, blockIdx, blockDim or gridDim themselves"
                .to_string(),
        );
        Threshold {
            value: v.to_source(),
            child_threads,
            from,
        }
    });
    if child_plan.is_some_and(|c| c.recursive && c.phased.is_some()) && site.threshold.is_some() {
        serialized.push(
            "the child is recursive and split at its barriers: its serial version runs one level, its own launches of the child are made as written (not serially), so that it never calls itself".to_string(),
        );
    } else if child_plan.is_some_and(|c| c.recursive) && site.threshold.is_some() {
        let depth = crate::names::Knob::SerialDepth.name(&child.symbol);
        serialized.push(format!(
            "the child is recursive: at most {DEFAULT_SERIAL_DEPTH} levels run serially ({depth}), deeper small launches are launched{}; raise it together with the device stack size (cudaDeviceSetLimit(cudaLimitStackSize, ...))",
            if site.floor.as_ref().is_some_and(|f| f.recursive) {
                " (in the launch-free copy: recorded in the work queue)"
            } else {
                ""
            }
        ));
    }
    if let Some(folds) = child_plan
        .and_then(|c| c.folds.as_ref())
        .filter(|f| !f.atomics.is_empty())
    {
        let at: Vec<String> = folds
            .atomics
            .iter()
            .map(|a| file.location(a.head.start()))
            .collect();
        serialized.push(format!(
            "the serial version folds the child's last `{}` into a register on an address the same for every child thread, in the launch-free copy: one atomic per serialized child instead of one per child thread ({}; -DDPOPT_FOLD_ATOMICS=0 turns it off)",
            folds.op.atomic(),
            at.join(", ")
        ));
    }
    if child_plan.is_some_and(|c| c.serial) {
        serialized.push(
            "a launch that finds no room (the pending-launch limit) runs serially instead, so no work is lost"
                .to_string(),
        );
    }
    let coarsen = site.coarsen.as_ref().map(|v| {
        checks.push(format!(
            "`{}` does not synchronize the grid nor read the block index outside `blockIdx`",
            child.name
        ));
        checks.push(format!(
            "`{}` does not both return early and synchronize the block",
            child.name
        ));
        Coarsen {
            factor: v.to_source(),
        }
    });
    let aggregation = site
        .aggregation
        .as_ref()
        .map(|a| aggregation_facts(program, site, a, &mut checks));
    let floor = site.floor.as_ref().map(|f| {
        checks.push(format!(
            "`{}` makes no launch and no device-runtime call but its `floor` launches (and reads of the last error), nor do the functions it calls; `{}` and its callees make none",
            parent.name, child.name
        ));
        serialized.push(
            "in the launch-free copy, a large child that finds the work list full runs serially in the parent thread"
                .to_string(),
        );
        let host_launches = plan
            .floors
            .iter()
            .filter(|k| k.kernel == site.parent)
            .flat_map(|k| &k.host_launches)
            .map(|&l| file.location(program.launches[l].span.start()))
            .collect();
        FloorFacts {
            copy: crate::names::floor_copy(&parent.name),
            launcher: crate::names::floor_launcher(&parent.name),
            host_launches,
            records: f.records.to_source(),
            block: match f.threads {
                crate::plan::FloorThreads::Exact(n) if f.wide => format!(
                    "{n} threads per recorded block, the child's block size (a record of another size runs serially), DPOPT_FLOOR_QUEUE_WIDTH({n}) of them side by side in each drain block (the child runs in any block shape: DPOPT_FLOOR_QUEUE_THREADS / {n}, from 1 to 32)"
                ),
                crate::plan::FloorThreads::Exact(n) => format!(
                    "{n} threads, the child's block size (a record of another size runs serially)"
                ),
                crate::plan::FloorThreads::Loop => format!(
                    "{} threads, each looping over a recorded block's threads",
                    crate::names::Knob::FloorThreads.name(&site.id)
                ),
            },
            join: f
                .join
                .then(|| crate::names::Knob::FloorJoin.name(&site.id)),
            recursive: f.recursive,
        }
    });
    let allocations = allocations(file, program, site);
    for a in &site.allocations {
        checks.push(format!(
            "every use of `{}` in `{}` and in the child's parameter is one dpopt follows (indexing, comparisons, this launch, memcpy/memset, free/cudaFree): no slice can be freed on its own",
            a.pointer, parent.name
        ));
        if a.granularity == crate::plan::AllocGranularity::Block {
            checks.push(format!(
                "no function running in the parent's blocks (`{}`, its callers and callees) waits at a block barrier or warp-synchronous operation (alloc(block))",
                parent.name
            ));
        }
    }
    SiteExplanation {
        allocations,
        floor,
        file: file.local(pragma_at).0.name.clone(),
        site: site.id.clone(),
        line,
        column,
        pragma: site.summary.clone(),
        parent: parent.qualified_name(),
        child: child.qualified_name(),
        child_defined_at: file.location(child.name_span.start()),
        threshold,
        coarsen,
        aggregation,
        promotion: None,
        serialized,
        knobs,
        checks,
    }
}

/// One line per allocation of the launch's pointers: how it is aggregated
/// (granularity, calls, frees), or why it is left per thread.
pub(crate) fn allocations(file: &SourceFile, program: &Program, site: &Site) -> Vec<String> {
    let mut lines: Vec<String> = site
        .allocations
        .iter()
        .map(|a| {
            let calls: Vec<String> = a
                .calls
                .iter()
                .map(|c| {
                    let name = if c.cuda { "cudaMalloc" } else { "malloc" };
                    format!("{name} at {}", file.location(c.callee.start()))
                })
                .collect();
            let frees = if a.frees.is_empty() {
                "never freed: plain slices".to_string()
            } else {
                let frees: Vec<String> = a
                    .frees
                    .iter()
                    .map(|f| {
                        let name = if f.cuda { "cudaFree" } else { "free" };
                        format!(
                            "{name} in `{}` at {}",
                            program.functions[f.function].name,
                            file.location(f.callee.start())
                        )
                    })
                    .collect();
                format!(
                    "freed by {}: each slice has a header, and the last slice released frees the allocation",
                    frees.join(", ")
                )
            };
            format!(
                "alloc({}){}: `{}` ({}): one allocation per {}, each thread a 16-byte-aligned slice; {frees}",
                a.granularity.spelling(),
                if a.explicit { "" } else { ", by default under consldt" },
                a.pointer,
                calls.join(", "),
                a.granularity.spelling()
            )
        })
        .collect();
    lines.extend(
        site.allocations_left
            .iter()
            .map(|why| format!("left per thread: {why}")),
    );
    lines
}

fn aggregation_facts(
    program: &Program,
    site: &Site,
    a: &Aggregation,
    checks: &mut Vec<String>,
) -> AggregationFacts {
    let child = &program.functions[site.child];
    let name = |i: usize| {
        child
            .params
            .get(i)
            .and_then(|p| p.name.clone())
            .unwrap_or_else(|| format!("dpopt_arg{i}"))
    };
    let (per_parent, passed_once): (Vec<usize>, Vec<usize>) =
        (0..child.params.len()).partition(|&i| a.varying.get(i).copied().unwrap_or(false));
    let granularity = granularity_name(a.granularity);
    let pooled = matches!(a.granularity, Granularity::Grid | Granularity::MultiBlock);
    if matches!(a.granularity, Granularity::Block | Granularity::MultiBlock) {
        checks.push(format!(
            "no function running in the parent's blocks (`{}`, its callers and callees) waits at a block barrier or warp-synchronous operation",
            program.functions[site.parent].name
        ));
    }
    let blocks = a.blocks.as_ref().map(|v| v.to_source());
    let threads = a.threads.as_ref().map(|v| v.to_source());
    if blocks.is_some() || threads.is_some() {
        checks.push(format!(
            "`{}` needs no threads of one original block running together (threads/blocks)",
            child.name
        ));
    }
    AggregationFacts {
        granularity,
        per_parent: per_parent.into_iter().map(name).collect(),
        passed_once: passed_once.into_iter().map(name).collect(),
        asserted: a.asserted,
        agg_threshold: a.agg_threshold.as_ref().map(|v| v.to_source()),
        group: (a.granularity == Granularity::MultiBlock).then(|| a.group.to_source()),
        pool_records: pooled.then(|| a.pool_records.to_source()),
        pools: (a.granularity == Granularity::Grid).then_some(a.pools),
        grid: match &blocks {
            Some(b) => {
                format!("at most {b} blocks (blocks), each looping over the original child blocks")
            }
            None => "one block per original child block of every parent aggregated".to_string(),
        },
        block: match &threads {
            Some(t) => {
                format!("{t} threads (threads), each looping over the original block's threads")
            }
            None => "as many threads as the largest original block".to_string(),
        },
    }
}

impl SiteExplanation {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    pub fn to_text(&self) -> String {
        let mut t = format!(
            "{}:{}:{}: site {}: {}\n  `{}` launches `{}` (defined at {})\n",
            self.file,
            self.line,
            self.column,
            self.site,
            self.pragma,
            self.parent,
            self.child,
            self.child_defined_at
        );
        if let Some(th) = &self.threshold {
            t.push_str(&format!(
                "  threshold: the child's thread count `{}` (from {}) is compared with {}\n",
                th.child_threads, th.from, th.value
            ));
        }
        for s in &self.serialized {
            t.push_str(&format!("  serial: {s}\n"));
        }
        if let Some(c) = &self.coarsen {
            t.push_str(&format!(
                "  coarsen: each launched block runs {} original blocks; the grid is divided by {}\n",
                c.factor, c.factor
            ));
        }
        if let Some(a) = &self.aggregation {
            let list = |v: &[String]| {
                if v.is_empty() {
                    "-".to_string()
                } else {
                    v.join(", ")
                }
            };
            t.push_str(&format!(
                "  aggregation: consldt({}): stored per parent: {}; passed once{}: {}\n",
                a.granularity,
                list(&a.per_parent),
                if a.asserted {
                    " (asserted by work(...))"
                } else {
                    ""
                },
                list(&a.passed_once)
            ));
            if let Some(r) = &a.pool_records {
                t.push_str(&format!(
                    "  pool: {r} records{}\n",
                    a.pools.map_or(String::new(), |p| format!(" x {p} pool(s)"))
                ));
            }
            if let Some(g) = &a.group {
                t.push_str(&format!("  group: {g} parent blocks\n"));
            }
            t.push_str(&format!(
                "  aggregated grid: {}; block: {}\n",
                a.grid, a.block
            ));
        }
        if let Some(f) = &self.floor {
            let launches = if f.host_launches.is_empty() {
                "none in this file".to_string()
            } else {
                f.host_launches.join(", ")
            };
            match &f.join {
                None if f.recursive => t.push_str(&format!(
                    "  floor: host launches ({launches}) call `{}`: the launch-free copy `{}` (small children serially, large ones into a work queue of {} records), then one drain grid that runs the queue's blocks until none is left and none is running; the blocks it runs record their own children in the same queue, so every level of the recursion runs without a launch; while every host launch of the kernel comes from one host thread into one stream (DPOPT_FLOOR_QUEUE_SOLO), a launch is the drain grid alone, its own blocks the queue's first tickets: blocks of {}\n",
                    f.launcher, f.copy, f.records, f.block
                )),
                Some(knob) => t.push_str(&format!(
                    "  floor: host launches ({launches}) call `{}`: the launch-free copy `{}` (small children serially, large ones run by the block that recorded them after its part of the body; with -D{knob}=0, a work list of {} records and a drain grid over it: blocks of {})\n",
                    f.launcher, f.copy, f.records, f.block
                )),
                None => t.push_str(&format!(
                    "  floor: host launches ({launches}) call `{}`: the launch-free copy `{}` (small children serially, large ones into a work list of {} records), then the drain grid over them: blocks of {}\n",
                    f.launcher, f.copy, f.records, f.block
                )),
            }
        }
        for a in &self.allocations {
            t.push_str(&format!("  allocation: {a}\n"));
        }
        if let Some(p) = &self.promotion {
            let list = |v: &[String]| {
                if v.is_empty() {
                    "-".to_string()
                } else {
                    v.join(", ")
                }
            };
            t.push_str(&format!("  promotion ({}): {}\n", p.kind, p.steps));
            t.push_str(&format!("  a promoted step waits {}\n", p.waits));
            t.push_str(&format!(
                "  arguments known when a step starts: {}; computed by the step, passed at the release: {}\n",
                list(&p.early),
                list(&p.at_release)
            ));
        }
        t.push_str("  knobs (-DNAME=VALUE when compiling the output):\n");
        for k in &self.knobs {
            t.push_str(&format!("    {}={}  {}\n", k.name, k.value, k.meaning));
        }
        t.push_str("  checks passed:\n");
        for c in &self.checks {
            t.push_str(&format!("    - {c}\n"));
        }
        t
    }
}

impl Explanation {
    pub fn to_text(&self) -> String {
        if self.sites.is_empty() {
            return format!("{}: no `#pragma dp` launch site to explain\n", self.file);
        }
        self.sites
            .iter()
            .map(SiteExplanation::to_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The callees a split serial version runs in place and the variables it
/// computes once per block, for the serial path's description.
fn inlined_and_uniform(
    program: &crate::program::Program,
    p: &crate::barrier_split::Phased,
) -> String {
    let mut out = String::new();
    if !p.inlined.is_empty() {
        let names: Vec<String> = p
            .inlined
            .iter()
            .map(|c| format!("`{}`", &program.view[c.range()]))
            .collect();
        out += &format!(
            "; the body of {} run in place of {}",
            names.join(", "),
            if names.len() == 1 {
                "its call"
            } else {
                "their calls"
            }
        );
    }
    if !p.uniform.is_empty() {
        out += &format!("; {} variable(s) computed once per block", p.uniform.len());
    }
    out
}
