//! Writing an output file as compilers do: atomically (a temporary file
//! beside it, renamed into place, so a failed run never leaves half a file),
//! with the usual permissions (a new file gets `0666 & ~umask`, an existing
//! file keeps its mode), and errors that name the output, never the
//! temporary file.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` atomically, with the usual permissions.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let existing = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut builder = tempfile::Builder::new();
    builder.prefix(".dpopt-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Created with open(2)'s mode, so the umask applies, as for any
        // file a compiler creates.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(&dir)
        .map_err(|e| format!("cannot write `{}`: {}", path.display(), describe(&e)))?;
    tmp.write_all(bytes)
        .map_err(|e| format!("cannot write `{}`: {}", path.display(), describe(&e)))?;
    if let Some(permissions) = existing {
        tmp.as_file()
            .set_permissions(permissions)
            .map_err(|e| format!("cannot write `{}`: {}", path.display(), describe(&e)))?;
    }
    tmp.persist(path)
        .map_err(|e| format!("cannot write `{}`: {}", path.display(), describe(&e.error)))?;
    Ok(())
}

/// The operating system's words for an error, without the temporary file's
/// path that some errors carry.
fn describe(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
        None => e.kind().to_string(),
    }
}
