//! `dpopt tune`: search the clauses of every `#pragma dp` site of a file by
//! building and running the program (docs/TUNING.md).

pub mod search;
pub mod space;
