//! The tera templates of every generated CUDA fragment (`templates/`),
//! compiled into the binary.

use tera::{Context, Tera};

pub struct Templates {
    tera: Tera,
}

pub const SITE: &str = "site.cu.tera";
pub const DECLARATIONS: &str = "declarations.cu.tera";
pub const DEFINITIONS: &str = "definitions.cu.tera";
pub const AGGREGATION: &str = "aggregation.cu.tera";
pub const AGGREGATION_GRID: &str = "aggregation_grid.cu.tera";
pub const AGGREGATION_BLOCK: &str = "aggregation_block.cu.tera";
pub const PRELUDE: &str = "prelude.cu.tera";
pub const STATS: &str = "stats.cu.tera";
pub const RECOVER: &str = "recover.cu.tera";
pub const BOUNDS: &str = "bounds.cu.tera";

impl Templates {
    pub fn new() -> Self {
        let mut tera = Tera::default();
        tera.autoescape_on(vec![]);
        tera.add_raw_templates(vec![
            (SITE, include_str!("../../templates/site.cu.tera")),
            (
                DECLARATIONS,
                include_str!("../../templates/declarations.cu.tera"),
            ),
            (
                DEFINITIONS,
                include_str!("../../templates/definitions.cu.tera"),
            ),
            (
                AGGREGATION,
                include_str!("../../templates/aggregation.cu.tera"),
            ),
            (
                AGGREGATION_GRID,
                include_str!("../../templates/aggregation_grid.cu.tera"),
            ),
            (
                AGGREGATION_BLOCK,
                include_str!("../../templates/aggregation_block.cu.tera"),
            ),
            (PRELUDE, include_str!("../../templates/prelude.cu.tera")),
            (
                "aggregation_config.cu.tera",
                include_str!("../../templates/aggregation_config.cu.tera"),
            ),
            (
                "disaggregate.cu.tera",
                include_str!("../../templates/disaggregate.cu.tera"),
            ),
            (STATS, include_str!("../../templates/stats.cu.tera")),
            (RECOVER, include_str!("../../templates/recover.cu.tera")),
            (BOUNDS, include_str!("../../templates/bounds.cu.tera")),
        ])
        .expect("the built-in templates parse");
        Templates { tera }
    }

    pub fn render(&self, name: &str, context: &Context) -> String {
        match self.tera.render(name, context) {
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
