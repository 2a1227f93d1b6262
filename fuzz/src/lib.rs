//! dpopt-fuzz: a contract fuzzer for dpopt (see README.md).
//!
//! * [`scanner`]: the oracle's own C++ preprocessing scanner (phases 1-3);
//! * [`mutate`]: the named mutation operators; [`seeds`]: the initial corpus;
//! * [`oracle`]: the contract checks on one input;
//! * [`worker`], [`protocol`], [`pool`]: supervised worker processes;
//! * [`campaign`]: rounds, corpus feedback, report, fixtures;
//! * [`minimize`]: delta debugging; [`coverage`]: SanitizerCoverage
//!   counters; [`nvcc`]: the compile sample.
pub mod campaign;
pub mod coverage;
pub mod minimize;
pub mod mutate;
pub mod nvcc;
pub mod oracle;
pub mod pool;
pub mod protocol;
pub mod rng;
pub mod scanner;
pub mod seeds;
pub mod worker;
