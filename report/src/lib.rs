//! dpopt's benchmark report: reads the suite's CSV files
//! (`bench/gpu_check.sh run` writes `suite.csv`), and writes a markdown table
//! of every benchmark and input with the baselines and the best variant of
//! each family, the geometric means next to paper 000's, and SVG plots.
//! Used by the `dpopt-report` binary; a workspace member of its own, so the
//! compiler does not depend on the plotting crates.

pub mod plots;
pub mod results;
pub mod summary;
