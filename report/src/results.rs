//! One measured run of the suite, and the variant naming of
//! `bench/gpu_check.sh`.

use std::path::Path;

/// One row of a suite CSV:
/// `benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu`.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub benchmark: String,
    pub input: String,
    pub variant: String,
    pub config: String,
    /// `cdp` (the program's CDP kernel, transformed or not) or `flat`.
    pub implementation: String,
    pub time_ms: Option<f64>,
    pub device_launches: Option<u64>,
    pub verified: bool,
    pub gpu: String,
}

/// Aggregation granularity of a variant, if it aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Granularity {
    Warp,
    Block,
    MultiBlock,
    Grid,
}

impl Granularity {
    pub fn name(self) -> &'static str {
        match self {
            Granularity::Warp => "warp",
            Granularity::Block => "block",
            Granularity::MultiBlock => "multiblock",
            Granularity::Grid => "grid",
        }
    }
}

/// What a variant name of the suite says: `orig`, `CDPff`, or the letters
/// T (threshold), C (coarsen), A (aggregate), L (aggregated allocations
/// alone, `alloc(...)` without `consldt`) or F (the launch-free floor)
/// followed by a lower-case suffix
/// naming the granularity (`b` block, `m` multiblock, `g` grid, otherwise
/// warp; `k` fixed `threads`/`blocks`, `a` an aggregation threshold, `n`
/// allocations left per thread); or a launch promotion, P followed by A
/// (aggregated) and O (overlap): P, PO, PA, PAO (bench/gpu_check.sh writes
/// its own table of those, the paper 003 Fig. 10 comparison).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub threshold: bool,
    pub coarsen: bool,
    pub aggregate: Option<Granularity>,
    /// `floor`: host launches run the parent's launch-free copy and a drain.
    pub floor: bool,
    /// The parent's allocations aggregated without launch aggregation
    /// (`alloc(...)` alone): a family of its own, not T, C or T+C.
    pub alloc: bool,
    /// The program as written (`orig`) or with fire-and-forget launches (`CDPff`).
    pub baseline: bool,
    /// A launch promotion (`P`, `PO`, `PA`, `PAO`): none of the families.
    pub promotion: bool,
}

impl Variant {
    pub fn parse(name: &str) -> Variant {
        if name == "orig" || name == "CDPff" || name.starts_with('P') {
            return Variant {
                threshold: false,
                coarsen: false,
                aggregate: None,
                floor: false,
                alloc: false,
                baseline: !name.starts_with('P'),
                promotion: name.starts_with('P'),
            };
        }
        let upper: String = name
            .chars()
            .take_while(|c| c.is_ascii_uppercase())
            .collect();
        let suffix = &name[upper.len()..];
        let aggregate = upper.contains('A').then(|| {
            if suffix.contains('g') {
                Granularity::Grid
            } else if suffix.contains('m') {
                Granularity::MultiBlock
            } else if suffix.contains('b') {
                Granularity::Block
            } else {
                Granularity::Warp
            }
        });
        Variant {
            threshold: upper.contains('T'),
            coarsen: upper.contains('C'),
            aggregate,
            floor: upper.contains('F'),
            alloc: upper.contains('L'),
            baseline: false,
            promotion: false,
        }
    }

    /// The family the report compares: "T", "C", "T+C", "A", "T+A", "C+A",
    /// "T+C+A"; with aggregated allocations alone "L", "T+L", "C+L", "T+C+L";
    /// with the floor "F", "T+F", "T+C+F", ...
    pub fn family(&self) -> Option<String> {
        if self.baseline {
            return None;
        }
        let mut parts = Vec::new();
        if self.threshold {
            parts.push("T");
        }
        if self.coarsen {
            parts.push("C");
        }
        if self.aggregate.is_some() {
            parts.push("A");
        }
        if self.floor {
            parts.push("F");
        }
        if self.alloc {
            parts.push("L");
        }
        (!parts.is_empty()).then(|| parts.join("+"))
    }
}

/// The threshold a configuration names (`t128c8g8` -> 128).
pub fn threshold_of(config: &str) -> Option<u64> {
    let rest = config.strip_prefix('t')?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// Parse one suite CSV; rows that do not parse are reported as errors.
pub fn parse_csv(text: &str) -> Result<Vec<Run>, String> {
    let mut lines = text.lines();
    let header = lines.next().ok_or("empty file")?;
    let columns: Vec<&str> = header.split(',').collect();
    let want = [
        "benchmark",
        "input",
        "variant",
        "config",
        "impl",
        "time_ms",
        "device_launches",
        "verified",
        "gpu",
    ];
    if columns != want {
        return Err(format!(
            "unexpected header `{header}` (want `{}`)",
            want.join(",")
        ));
    }
    let mut runs = Vec::new();
    for (i, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != want.len() {
            return Err(format!(
                "line {}: {} fields, want {}",
                i + 2,
                f.len(),
                want.len()
            ));
        }
        runs.push(Run {
            benchmark: f[0].to_string(),
            input: f[1].to_string(),
            variant: f[2].to_string(),
            config: f[3].to_string(),
            implementation: f[4].to_string(),
            time_ms: f[5].parse().ok(),
            device_launches: f[6].parse().ok(),
            verified: f[7] == "yes",
            gpu: f[8].to_string(),
        });
    }
    Ok(runs)
}

pub fn read_csv(path: &Path) -> Result<Vec<Run>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_csv(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_names() {
        let v = Variant::parse("TCAm");
        assert!(v.threshold && v.coarsen && !v.baseline);
        assert_eq!(v.aggregate, Some(Granularity::MultiBlock));
        assert_eq!(v.family().as_deref(), Some("T+C+A"));
        assert_eq!(Variant::parse("A").aggregate, Some(Granularity::Warp));
        assert_eq!(Variant::parse("Agk").aggregate, Some(Granularity::Grid));
        assert_eq!(Variant::parse("TCAa").aggregate, Some(Granularity::Warp));
        let f = Variant::parse("TCF");
        assert!(f.floor && f.aggregate.is_none());
        assert_eq!(f.family().as_deref(), Some("T+C+F"));
        assert_eq!(Variant::parse("TC").aggregate, None);
        assert_eq!(Variant::parse("TC").family().as_deref(), Some("T+C"));
        assert!(Variant::parse("CDPff").baseline);
        // Promotion (with aggregation) is no aggregation family.
        let pa = Variant::parse("PAO");
        assert!(pa.promotion && !pa.baseline);
        assert_eq!(pa.aggregate, None);
        assert_eq!(pa.family(), None);
        assert_eq!(Variant::parse("orig").family(), None);
        // Aggregated allocations alone are no T+C, and their launches no A.
        assert_eq!(Variant::parse("TCLb").family().as_deref(), Some("T+C+L"));
        assert_eq!(Variant::parse("L").family().as_deref(), Some("L"));
        assert_eq!(Variant::parse("TCL").aggregate, None);
        assert_eq!(Variant::parse("TCAbn").aggregate, Some(Granularity::Block));
        assert_eq!(threshold_of("t128c8g8"), Some(128));
        assert_eq!(threshold_of("c8"), None);
    }

    #[test]
    fn csv_rows() {
        let text = "benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu\n\
                    bfs,s14,TCAm,t128c8g8,cdp,0.25,49,yes,NVIDIA H200\n\
                    bfs,s14,orig,-,flat,0.9,,yes,NVIDIA H200\n";
        let runs = parse_csv(text).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].device_launches, Some(49));
        assert_eq!(runs[1].device_launches, None);
        assert_eq!(runs[1].time_ms, Some(0.9));
        assert!(parse_csv("a,b\n").is_err());
    }
}
