//! Reading a document, bounded: a handoff is a few kilobytes, and what
//! sits among the handoff paths may be anything (a log of hundreds of
//! megabytes, a link to `/dev/zero`, a FIFO nobody writes to). Only a
//! regular file is read, and only its first `MAX_BYTES`.

use std::io::Read;
use std::path::Path;

/// How much of a document is read. Its frontmatter must close within it;
/// what follows is only looked at for bytes that are not UTF-8.
pub const MAX_BYTES: usize = 4 << 20;

/// A document's bytes, or its first `MAX_BYTES` when it is longer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub bytes: Vec<u8>,
    /// Whether the document goes on beyond `bytes`.
    pub truncated: bool,
}

impl Document {
    /// A document whose bytes were read elsewhere (from the index or a
    /// commit), held to the same bound as one read from a file, so the
    /// verdict does not depend on where it came from.
    pub fn from_bytes(mut bytes: Vec<u8>) -> Document {
        let truncated = bytes.len() > MAX_BYTES;
        bytes.truncate(MAX_BYTES);
        Document { bytes, truncated }
    }
}

/// Reads the document at `path` (a symbolic link is followed). Anything
/// but a regular file is an error that says what it is: opening a FIFO
/// waits for a writer, and a device may never end.
pub fn read(path: &Path) -> std::io::Result<Document> {
    read_at_most(path, MAX_BYTES).map(Document::from_bytes)
}

/// The first `limit + 1` bytes of the regular file at `path` (so a caller
/// can tell a longer one was cut), refused as `read` refuses what is not a
/// regular file.
pub fn read_at_most(path: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file: a handoff document is a Markdown file; remove it from the handoff paths or name a file",
            kind(&meta)
        )));
    }
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Whether `path` is a pattern (`handoffs/*.md`) rather than a name: a
/// pattern the shell did not expand (quoted, or run with no shell, as an
/// agent's tool runs commands) reaches phasegate as written.
pub fn is_pattern(path: &str) -> bool {
    path.contains(['*', '?', '[', '{'])
}

/// The files `pattern` matches under `dir` (a relative pattern is taken
/// from `dir`), each as the pattern would name it, sorted; the syntax is
/// that of `[handoff] paths` (`*` within one directory, `**` across
/// them). Only the directories the pattern can reach are read: those under
/// its leading part without wildcards, no deeper than it goes unless it
/// has `**`. Git's own directory and links to directories are not entered.
pub fn expand(dir: &Path, pattern: &str) -> Result<Vec<std::path::PathBuf>, globset::Error> {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let glob = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()?
        .compile_matcher();
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal = parts.iter().take_while(|part| !is_pattern(part)).count();
    // The last part is a file's name, never a directory to start from.
    let literal = literal.min(parts.len().saturating_sub(1));
    let start = parts[..literal].join("/");
    let rest = &parts[literal..];
    let depth = if rest.contains(&"**") {
        usize::MAX
    } else {
        rest.len()
    };
    let mut found = Vec::new();
    let mut pending = vec![(std::path::PathBuf::from(&start), 1)];
    while let Some((named, level)) = pending.pop() {
        // An absolute pattern's start replaces `dir`.
        let Ok(entries) = std::fs::read_dir(dir.join(&named)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let path = named.join(&name);
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if name != ".git" && level < depth {
                    pending.push((path, level + 1));
                }
            } else if glob.is_match(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// What a path that is not a regular file is, for the error.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return "it is a FIFO, which";
        } else if kind.is_char_device() || kind.is_block_device() {
            return "it is a device, which";
        } else if kind.is_socket() {
            return "it is a socket, which";
        }
    }
    if meta.is_dir() {
        "it is a directory, which"
    } else {
        "it"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_document_is_cut_at_the_bound() {
        let doc = Document::from_bytes(vec![b'a'; MAX_BYTES + 10]);
        assert!(doc.truncated);
        assert_eq!(doc.bytes.len(), MAX_BYTES);
        let doc = Document::from_bytes(b"---\n".to_vec());
        assert!(!doc.truncated);
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_refused_not_read() {
        let error = read(Path::new("/dev/zero")).unwrap_err();
        assert!(error.to_string().contains("is a device"), "{error}");
    }
}
