//! dpopt-fuzz: a contract fuzzer for dpopt (see README.md).
pub mod rng;
pub mod scanner;
