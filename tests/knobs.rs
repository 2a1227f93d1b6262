//! The knobs `dpopt check` lists are exactly the knobs the output defines:
//! for every example and fixture, as annotated and with each aggregation
//! granularity added, the macro names of `check` (the `Outcome`'s sites)
//! equal the names the generated code defines as knobs (`#ifndef NAME`,
//! `#  ifdef GLOBAL`, `#    define NAME GLOBAL`).

mod common;

use std::collections::BTreeSet;

/// The knobs a generated file defines.
fn defined_knobs(output: &str) -> BTreeSet<String> {
    let lines: Vec<&str> = output.lines().collect();
    lines
        .windows(3)
        .filter_map(|w| {
            let name = w[0].strip_prefix("#ifndef ")?.trim();
            let global = w[1].strip_prefix("#  ifdef ")?.trim();
            (w[2].trim() == format!("#    define {name} {global}")).then(|| name.to_string())
        })
        .collect()
}

/// The knobs `dpopt check` lists for a file, and the output.
fn listed_and_defined(name: &str, bytes: &[u8]) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
    let file = dpopt::source::SourceFile::new(name, bytes.to_vec());
    let outcome = common::transform_with_headers(&file, "out.cu");
    let output = outcome.output?;
    let listed = outcome
        .sites
        .iter()
        .flat_map(|s| s.macros.iter().map(|(m, _)| m.clone()))
        .collect();
    Some((listed, defined_knobs(&String::from_utf8_lossy(&output))))
}

fn added(text: &str, clause: &str) -> Vec<u8> {
    common::append_to_pragmas(text, clause).into_bytes()
}

#[test]
fn check_lists_every_knob_the_output_defines() {
    let mut mismatches = Vec::new();
    let mut compared = 0;
    let mut pooled = 0;
    for path in common::corpus() {
        // A fixture that is not UTF-8 is compared as annotated only.
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let name = common::relative(&path);
        let variants = [
            ("as annotated", bytes.clone()),
            ("grid", added(&text, " consldt(grid)")),
            ("multiblock", added(&text, " consldt(multiblock, 4)")),
            ("warp", added(&text, " consldt(warp)")),
        ];
        for (variant, bytes) in variants {
            let Some((listed, defined)) = listed_and_defined(&name, &bytes) else {
                continue; // refused (a hazard fixture, or a clause twice)
            };
            compared += 1;
            if defined.iter().any(|k| k.starts_with("DPOPT_POOL_RECORDS_")) {
                pooled += 1;
            }
            if listed != defined {
                mismatches.push(format!(
                    "{name} ({variant}): check lists {listed:?}, the output defines {defined:?}"
                ));
            }
        }
    }
    assert!(compared >= 20, "only {compared} programs compared");
    assert!(pooled >= 5, "only {pooled} programs with a pool compared");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn knob_pattern_is_recognized() {
    let output = "#ifndef DPOPT_GROUP_p_1\n#  ifdef DPOPT_GROUP\n#    define DPOPT_GROUP_p_1 DPOPT_GROUP\n#  else\n#    define DPOPT_GROUP_p_1 8\n#  endif\n#endif\n#ifndef DPOPT_KNOB\n#  define DPOPT_KNOB(m) (m)\n#endif\n";
    assert_eq!(
        defined_knobs(output),
        BTreeSet::from(["DPOPT_GROUP_p_1".to_string()])
    );
}
