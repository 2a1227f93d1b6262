//! Property test: mutated example files never make dpopt panic. Every run
//! ends in an output or in at least one error, every diagnostic renders (in
//! each message format), and the sites that were planned are explained.

mod common;

use dpopt::source::SourceFile;
use miette::{GraphicalReportHandler, GraphicalTheme};
use proptest::prelude::*;

/// Fragments that stress the lexer, parser and analyzer.
const PIECES: &[&str] = &[
    "<<<",
    ">>>",
    "#pragma dp threshold(",
    "#pragma dp coarsen(4)\n",
    "\n#pragma dp threshold(8) coarsen(2)\n",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    "\"",
    "'",
    "/*",
    "*/",
    "//",
    "\\\n",
    "\r\n",
    "\n",
    "template <typename T>",
    "__global__",
    "__device__",
    "__shared__",
    "__syncthreads();",
    "return;",
    "dim3(",
    "blockIdx.x",
    "0",
    "-1",
    "consldt(grid)",
    "child_threads(",
    "R\"(",
    "#",
    "<",
    ">",
    ">>",
    "::",
    "\u{e9}",
    "\u{0}",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, piece: usize },
    InsertByte { at: usize, byte: u8 },
    Duplicate { at: usize, len: usize, to: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..PIECES.len()).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::InsertByte { at, byte }),
        (any::<usize>(), 1usize..200, any::<usize>())
            .prop_map(|(at, len, to)| Mutation::Duplicate { at, len, to }),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let n = bytes.len().max(1);
        match *m {
            Mutation::Delete { at, len } => {
                let at = at % n;
                let end = (at + len).min(bytes.len());
                if at < end {
                    bytes.drain(at..end);
                }
            }
            Mutation::Insert { at, piece } => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, PIECES[piece].bytes());
            }
            Mutation::InsertByte { at, byte } => {
                let at = at % (bytes.len() + 1);
                bytes.insert(at, byte);
            }
            Mutation::Duplicate { at, len, to } => {
                let at = at % n;
                let end = (at + len).min(bytes.len());
                let chunk: Vec<u8> = bytes.get(at..end).unwrap_or(&[]).to_vec();
                let to = to % (bytes.len() + 1);
                bytes.splice(to..to, chunk);
            }
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn mutated_programs_never_panic(
        which in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let corpus = common::corpus();
        let original = std::fs::read(&corpus[which % corpus.len()]).unwrap();
        let bytes = apply(original, &mutations);
        let file = SourceFile::new("mutated.cu", bytes);
        let outcome = dpopt::run(&file, "out.cu", true);
        prop_assert!(outcome.output.is_some() || outcome.has_errors());
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor());
        for d in &outcome.diagnostics {
            let mut rendered = String::new();
            handler.render_report(&mut rendered, d.to_report(&file).as_ref()).unwrap();
            prop_assert!(rendered.contains("mutated.cu:"));
            // The other message formats too.
            let short = dpopt::message_format::short(d, &file);
            prop_assert!(short.starts_with("mutated.cu:") && !short.contains('\n'));
            let json = dpopt::message_format::json(d, &file);
            prop_assert_eq!(&json["file"], "mutated.cu");
            prop_assert!(json["line"].as_u64().is_some_and(|l| l >= 1));
            prop_assert!(json["spans"][0]["column"].as_u64().is_some_and(|c| c >= 1));
        }
        // And the explanation of whatever was planned.
        let explanation = dpopt::explain::explain(&file, None);
        for site in &explanation.sites {
            prop_assert!(site.to_text().contains(&site.site));
        }
    }
}
