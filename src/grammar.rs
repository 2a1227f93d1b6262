//! The pest grammar (`grammar.pest` at the repository root).

use pest_derive::Parser;

#[derive(Parser)]
#[grammar = "../grammar.pest"]
pub struct DpGrammar;
