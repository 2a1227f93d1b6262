//! What a bare `#pragma dp` (no clause) means: the default configuration of
//! its class of site, a tiny cost model from what dpopt knows statically.
//! `bench/default_config.py` computes it from the committed sweep
//! (bench/results/2026-11-24-h100-suite.csv, 28 inputs): per class the
//! configuration with the best geometric mean of (the input's best time /
//! its time) over the class's inputs. A recursive child (the trees) is best
//! thresholded at 32 with block aggregation (0.959 of the best), any other
//! with threshold 128, factor 8 and grid aggregation (0.707); together 0.731
//! over the suite, against 0.711 for the best single configuration (t32 c8
//! grid) and 0.441 for t128 c8 multiblock 8. Where the site refuses a clause
//! of its default (a child that cannot run serially or be coarsened, a
//! parent's block that waits), the next candidate of the class that it
//! accepts is taken. A recursive site whose kernel the file launches from
//! the host takes the launch-free floor first (`RECURSIVE_FLOOR`: the work
//! queue runs every level without a launch; on the H100 the trees ran it in
//! 0.05, 0.33 and 0.42 ms against 0.44, 0.67 and 0.77 ms at t32 block,
//! bench/results/2026-11-27-h100-tune-s17-*.csv), where `floor` accepts it
//! with nothing to say (`floor::floors` on the site alone: no diagnostic,
//! host launches found).

use super::{block_hazards, child, floor, sites};
use crate::constant::Constants;
use crate::diagnostic::Diagnostic;
use crate::hazard::Hazards;
use crate::phases::directive_text;
use crate::plan::{Plan, Site};
use crate::pragma::{parse_directive, Directive};
use crate::program::Program;
use crate::source::SourceFile;
use std::collections::BTreeMap;

/// The first candidate of a site whose child launches itself, where the
/// floor takes it.
pub const RECURSIVE_FLOOR: &str = "floor";

/// The candidates of a site whose child launches itself, best first.
pub const RECURSIVE: [&str; 4] = [
    "threshold(32) consldt(block)",
    "threshold(32) consldt(grid)",
    "consldt(block)",
    "consldt(grid)",
];

/// The candidates of any other site, best first.
pub const OTHER: [&str; 4] = [
    "threshold(128) coarsen(8) consldt(grid)",
    "threshold(128) consldt(grid)",
    "coarsen(8) consldt(grid)",
    "consldt(grid)",
];

/// `clauses` as the directive of the pragma `index` (every clause spans the
/// pragma).
fn directive(program: &Program, index: crate::program::PragmaId, clauses: &str) -> Directive {
    let span = program.pragmas[index].span;
    let mut d = parse_directive(&directive_text(&format!("#pragma dp {clauses}"), 0))
        .expect("the default clauses parse");
    d.span = span;
    for c in &mut d.clauses {
        c.span = span;
    }
    d
}

/// The site of a bare `#pragma dp`: the first candidate of its class that
/// the site accepts (the last one's diagnostics when none is).
#[allow(clippy::too_many_arguments)]
pub(super) fn default_site(
    file: &SourceFile,
    program: &Program,
    index: crate::program::PragmaId,
    bare: Directive,
    per_parent: &mut BTreeMap<String, usize>,
    constants: &Constants,
    hazards: &Hazards,
) -> Result<(Site, Vec<Diagnostic>), Diagnostic> {
    let (plain, _) = sites::site_for(
        file,
        program,
        index,
        bare,
        &mut per_parent.clone(),
        constants,
    )?;
    let recursive = sites::site_is_recursive(program, plain.parent, plain.child);
    let candidates = if recursive {
        &RECURSIVE[..]
    } else {
        &OTHER[..]
    };
    let shape = child::serial_shape(
        program,
        constants,
        plain.child,
        [(&program.launches[plain.launch], plain.parent)],
    );
    let facts = child::ChildFacts::gather(program, hazards, constants, plain.child, shape);
    let function = &program.functions[plain.child];
    let mut chosen = candidates[candidates.len() - 1];
    // A recursive site tries the floor first: taken where `floor` accepts
    // the site alone with nothing to say and finds the kernel's host
    // launches.
    for &clauses in std::iter::once(&RECURSIVE_FLOOR)
        .filter(|_| recursive)
        .chain(candidates)
    {
        // A candidate the site refuses outright (the floor of a launch with
        // shared memory that is not a constant) is passed over like one
        // refused below.
        let Ok((site, _)) = sites::site_for(
            file,
            program,
            index,
            directive(program, index, clauses),
            &mut per_parent.clone(),
            constants,
        ) else {
            continue;
        };
        let mut trial = Plan::default();
        trial.sites.push(site.clone());
        let floor_refused = site.floor.is_some() && {
            let f = floor::floors(file, program, &trial, hazards);
            !f.diagnostics.is_empty()
                || f.kernels.is_empty()
                || f.kernels.iter().any(|k| k.host_launches.is_empty())
        };
        let refused = floor_refused
            || child::check_child(program, &site, function, &facts)
                .iter()
                .chain(&block_hazards::check_block_aggregation(
                    program, &trial, hazards,
                ))
                .any(Diagnostic::is_error);
        if !refused {
            chosen = clauses;
            break;
        }
    }
    let (mut site, warnings) = sites::site_for(
        file,
        program,
        index,
        directive(program, index, chosen),
        per_parent,
        constants,
    )?;
    site.summary = format!("#pragma dp (the default: {chosen})");
    Ok((site, warnings))
}
