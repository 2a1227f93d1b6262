//! dpopt-fuzz: a contract fuzzer for dpopt (see README.md).
pub mod mutate;
pub mod rng;
pub mod scanner;
