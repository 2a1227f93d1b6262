//! The initial corpus: the project's CUDA files plus built-in seeds written
//! in the style of real CUDA code (fuzz/seeds/*.cu).

use std::path::Path;

/// One corpus file.
#[derive(Debug, Clone)]
pub struct Seed {
    /// Where it came from, e.g. `examples/bfs.cu` or `builtin:ifdef_branches.cu`.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Built-in seeds, compiled into the binary.
const BUILTIN: &[(&str, &[u8])] = &[
    (
        "namespaces_templates.cu",
        include_bytes!("../seeds/namespaces_templates.cu"),
    ),
    (
        "ifdef_branches.cu",
        include_bytes!("../seeds/ifdef_branches.cu"),
    ),
    (
        "cooperative_groups.cu",
        include_bytes!("../seeds/cooperative_groups.cu"),
    ),
    (
        "raw_strings_macros.cu",
        include_bytes!("../seeds/raw_strings_macros.cu"),
    ),
    ("block_1024.cu", include_bytes!("../seeds/block_1024.cu")),
    (
        "class_params.cu",
        include_bytes!("../seeds/class_params.cu"),
    ),
    ("no_pragma.cu", include_bytes!("../seeds/no_pragma.cu")),
    (
        "multi_site_streams.cu",
        include_bytes!("../seeds/multi_site_streams.cu"),
    ),
];

/// Directories of the repository whose `*.cu` files are seeds.
pub const SEED_DIRS: &[&str] = &[
    "examples",
    "tests/fixtures",
    "tests/multi_tu",
    "tests/contract",
    "tests/hazards",
    "tests/postwork",
];

/// The project's files under `root` (sorted, for reproducibility) followed
/// by the built-in seeds.
pub fn load(root: &Path) -> Vec<Seed> {
    let mut seeds = Vec::new();
    for dir in SEED_DIRS {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cu"))
            .collect();
        paths.sort();
        for path in paths {
            if let Ok(bytes) = std::fs::read(&path) {
                let name = path.strip_prefix(root).unwrap_or(&path);
                seeds.push(Seed {
                    name: name.display().to_string(),
                    bytes,
                });
            }
        }
    }
    seeds.extend(builtin());
    seeds
}

pub fn builtin() -> Vec<Seed> {
    BUILTIN
        .iter()
        .map(|(name, bytes)| Seed {
            name: format!("builtin:{name}"),
            bytes: bytes.to_vec(),
        })
        .collect()
}

/// The workspace root this crate was built in (seeds and `-I examples`).
pub fn default_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf()
}
