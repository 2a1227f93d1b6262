//! The tera templates of every generated CUDA fragment (`templates/`),
//! compiled into the binary.

use super::context::TemplateContext;
use tera::{Context, Tera};

/// The templates, compiled when first needed: those of every transformed
/// file at once, each aggregation template (most of the text) with what it
/// includes only for a file that aggregates at that granularity.
pub struct Templates {
    core: Tera,
    /// Compiled when first needed (tera's parsing is most of a small
    /// file's time): the three aggregation templates, the queue of
    /// deferred launches, the postwork continuation, launch promotion and
    /// the floor.
    lazy: [std::sync::OnceLock<Tera>; 7],
}

pub const SITE: &str = "site.cu.tera";
pub const DECLARATIONS: &str = "declarations.cu.tera";
/// The head of a child's body function; its body follows, then DEFINITIONS.
pub const BODY: &str = "body.cu.tera";
pub const DEFINITIONS: &str = "definitions.cu.tera";
/// The serial version of a child split at its barriers, part by part.
pub const SERIAL_SPLIT: &str = "serial_split.cu.tera";
/// The copy of a callee that reads positions, part by part.
pub const POSITION_CLONE: &str = "position_clone.cu.tera";
/// The folds of a child's last atomics and the head of the serial
/// version's copy of its body; the body follows, then DEFINITIONS.
pub const FOLD: &str = "fold.cu.tera";
/// The folded atomics combined per warp and the head of the drains' copy of
/// the child's body; the body follows, then DEFINITIONS.
pub const WARP_FOLD: &str = "wfold.cu.tera";
pub const AGGREGATION: &str = "aggregation.cu.tera";
pub const AGGREGATION_GRID: &str = "aggregation_grid.cu.tera";
pub const AGGREGATION_BLOCK: &str = "aggregation_block.cu.tera";
pub const PRELUDE: &str = "prelude.cu.tera";
pub const STATS: &str = "stats.cu.tera";
pub const RECOVER: &str = "recover.cu.tera";
pub const BOUNDS: &str = "bounds.cu.tera";
pub const NAMESPACES: &str = "namespaces.cu.tera";
pub const CONTINUATION: &str = "continuation.cu.tera";
pub const PROMOTE: &str = "promote.cu.tera";
/// The launch-free floor of a kernel: the copy's head (its body follows,
/// then FLOOR_LAUNCHER: the host launcher), and one of its sites.
pub const FLOOR: &str = "floor.cu.tera";
pub const FLOOR_LAUNCHER: &str = "floor_launcher.cu.tera";
pub const FLOOR_SITE: &str = "floor_site.cu.tera";
/// A recursive site's work queue, recording function and persistent drain.
pub const FLOOR_QUEUE: &str = "floor_queue.cu.tera";
/// The head of a recursive floor kernel's body function (the body follows,
/// then FLOOR_LAUNCHER).
pub const FLOOR_RBODY: &str = "floor_rbody.cu.tera";
/// The floor's host and device support, copied into the prelude as it is.
pub const FLOOR_SUPPORT: &str = include_str!("../../templates/floor.cuh");
/// The queue of a child's deferred launches.
pub const DEFER: &str = "defer.cu.tera";
/// The deferred-launch queue's generic code (C++ templates), copied into
/// the prelude as it is.
pub const DEFER_QUEUE: &str = include_str!("../../templates/defer_queue.cuh");
pub const SERIAL_LIST: &str = include_str!("../../templates/serial_list.cuh");
/// The count of unfinished launches against the pending-launch limit: the
/// same in every file with sites, copied into the prelude as it is.
pub const LAUNCH_BUDGET: &str = include_str!("../../templates/launch_budget.cuh");

/// The aggregated allocations' generic code (C++ templates), copied into
/// the prelude as it is.
pub const ALLOC_SUPPORT: &str = include_str!("../../templates/alloc.cuh");

/// A tera instance holding these templates (and whatever they import).
fn compile(templates: Vec<(&str, &str)>) -> Tera {
    let mut tera = Tera::default();
    tera.autoescape_on(vec![]);
    tera.add_raw_templates(templates)
        .expect("the built-in templates parse");
    tera
}

const RECOVER_TEXT: &str = include_str!("../../templates/recover.cu.tera");

impl Templates {
    pub fn new() -> Self {
        Templates {
            core: compile(vec![
                (SITE, include_str!("../../templates/site.cu.tera")),
                (
                    DECLARATIONS,
                    include_str!("../../templates/declarations.cu.tera"),
                ),
                (BODY, include_str!("../../templates/body.cu.tera")),
                (
                    SERIAL_SPLIT,
                    include_str!("../../templates/serial_split.cu.tera"),
                ),
                (
                    POSITION_CLONE,
                    include_str!("../../templates/position_clone.cu.tera"),
                ),
                (FOLD, include_str!("../../templates/fold.cu.tera")),
                (WARP_FOLD, include_str!("../../templates/wfold.cu.tera")),
                (
                    DEFINITIONS,
                    include_str!("../../templates/definitions.cu.tera"),
                ),
                (PRELUDE, include_str!("../../templates/prelude.cu.tera")),
                (STATS, include_str!("../../templates/stats.cu.tera")),
                (RECOVER, RECOVER_TEXT),
                (BOUNDS, include_str!("../../templates/bounds.cu.tera")),
                (
                    NAMESPACES,
                    include_str!("../../templates/namespaces.cu.tera"),
                ),
            ]),
            lazy: Default::default(),
        }
    }

    fn alone(&self, which: usize, name: &'static str, text: &'static str) -> &Tera {
        self.lazy[which].get_or_init(|| compile(vec![(name, text)]))
    }

    fn aggregation(&self, which: usize, name: &'static str, text: &'static str) -> &Tera {
        self.lazy[which].get_or_init(|| {
            compile(vec![
                (name, text),
                (
                    "aggregation_config.cu.tera",
                    include_str!("../../templates/aggregation_config.cu.tera"),
                ),
                (
                    "disaggregate.cu.tera",
                    include_str!("../../templates/disaggregate.cu.tera"),
                ),
                (
                    "disaggregate_run.cu.tera",
                    include_str!("../../templates/disaggregate_run.cu.tera"),
                ),
                (RECOVER, RECOVER_TEXT),
            ])
        })
    }

    /// Fill the template of `context`.
    pub fn render<C: TemplateContext>(&self, context: &C) -> String {
        let name = context.template();
        let context = Context::from_serialize(context)
            .unwrap_or_else(|e| panic!("internal error: context of {name}: {e:?}"));
        let tera = match name {
            AGGREGATION => self.aggregation(
                0,
                AGGREGATION,
                include_str!("../../templates/aggregation.cu.tera"),
            ),
            AGGREGATION_GRID => self.aggregation(
                1,
                AGGREGATION_GRID,
                include_str!("../../templates/aggregation_grid.cu.tera"),
            ),
            AGGREGATION_BLOCK => self.aggregation(
                2,
                AGGREGATION_BLOCK,
                include_str!("../../templates/aggregation_block.cu.tera"),
            ),
            DEFER => self.alone(3, DEFER, include_str!("../../templates/defer.cu.tera")),
            CONTINUATION => self.alone(
                4,
                CONTINUATION,
                include_str!("../../templates/continuation.cu.tera"),
            ),
            PROMOTE => self.alone(5, PROMOTE, include_str!("../../templates/promote.cu.tera")),
            FLOOR | FLOOR_LAUNCHER | FLOOR_SITE | FLOOR_QUEUE | FLOOR_RBODY => self.lazy[6]
                .get_or_init(|| {
                    compile(vec![
                        (FLOOR, include_str!("../../templates/floor.cu.tera")),
                        (
                            FLOOR_LAUNCHER,
                            include_str!("../../templates/floor_launcher.cu.tera"),
                        ),
                        (
                            FLOOR_SITE,
                            include_str!("../../templates/floor_site.cu.tera"),
                        ),
                        (
                            "floor_record.cu.tera",
                            include_str!("../../templates/floor_record.cu.tera"),
                        ),
                        (
                            "disaggregate.cu.tera",
                            include_str!("../../templates/disaggregate.cu.tera"),
                        ),
                        (
                            "disaggregate_run.cu.tera",
                            include_str!("../../templates/disaggregate_run.cu.tera"),
                        ),
                        (
                            FLOOR_QUEUE,
                            include_str!("../../templates/floor_queue.cu.tera"),
                        ),
                        (
                            FLOOR_RBODY,
                            include_str!("../../templates/floor_rbody.cu.tera"),
                        ),
                    ])
                }),
            _ => &self.core,
        };
        match tera.render(name, &context) {
            Ok(text) => text,
            // The templates and their contexts are both ours: a failure is a
            // bug in dpopt, not in the user's input.
            Err(e) => panic!("internal error: template {name}: {e:?}"),
        }
    }
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}
