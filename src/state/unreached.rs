//! `pushes/<push id>.json`: the refs of a push that its pre-push hook
//! never reached, a Ctrl-C having stopped it before their runs began. They
//! have no run of their own to be resumed from, so they are kept here,
//! beside the push's runs in the history (`SelectionRecord::push`), for
//! `phasegate resume` to check them with those runs. Written atomically;
//! removed once a resume has taken them up.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::lock::write_atomic;
use super::store::SelectionRecord;

pub const UNREACHED_SCHEMA: &str = "phasegate/unreached/v1";

/// The refs of one push that were never checked.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Unreached {
    pub schema: String,
    /// The work tree the push was made from (`RepoInfo::work_tree_key`):
    /// another work tree's resume does not check them on its files.
    pub work_tree: String,
    /// What each ref would have checked, with its name (`pushed_ref`).
    pub refs: Vec<SelectionRecord>,
}

/// Where the refs `push` did not reach are kept; none for a push id that
/// is not one phasegate gives (`hook::push_id`), as a history edited by
/// hand may hold, which must not name a path outside `pushes/`.
fn unreached_file(state_dir: &Path, push: &str) -> Option<PathBuf> {
    let plain = !push.is_empty()
        && !push.starts_with('.')
        && push
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    plain.then(|| state_dir.join("pushes").join(format!("{push}.json")))
}

/// Keeps `refs`, the refs of the push `push` made from `work_tree` that
/// were not checked, for `phasegate resume`.
pub fn record_unreached(
    state_dir: &super::StateDir,
    push: &str,
    work_tree: &str,
    refs: Vec<SelectionRecord>,
) -> io::Result<()> {
    let Some(path) = unreached_file(state_dir, push) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{push}` is not a push id"),
        ));
    };
    let named = |e: &io::Error| super::io_error(state_dir, &path, "write", e);
    if let Some(dir) = path.parent() {
        // Group-writable like the rest of the state where the repository
        // is shared: another member's push writes here too.
        state_dir.sharing.create_dirs(dir).map_err(|e| named(&e))?;
    }
    let unreached = Unreached {
        schema: UNREACHED_SCHEMA.to_string(),
        work_tree: work_tree.to_string(),
        refs,
    };
    let mut bytes = serde_json::to_vec_pretty(&unreached).map_err(io::Error::other)?;
    bytes.push(b'\n');
    write_atomic(&path, &bytes, state_dir.sharing).map_err(|e| named(&e))
}

/// The refs of the push `push` that were not checked (none when every
/// one was, or a resume took them up); an error names the file that
/// cannot be read.
pub fn unreached(state_dir: &Path, push: &str) -> io::Result<Option<Unreached>> {
    let Some(path) = unreached_file(state_dir, push) else {
        return Ok(None);
    };
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(super::io_error(state_dir, &path, "read", &e)),
    };
    serde_json::from_slice::<Unreached>(&bytes)
        .ok()
        .filter(|read| read.schema == UNREACHED_SCHEMA)
        .map(Some)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "`{}` is not a record of the refs a push did not check (`{UNREACHED_SCHEMA}`)",
                    path.display()
                ),
            )
        })
}

/// Forgets the refs of `push` that were not checked, once a resume has
/// taken them up.
pub fn forget_unreached(state_dir: &Path, push: &str) -> io::Result<()> {
    let Some(path) = unreached_file(state_dir, push) else {
        return Ok(());
    };
    match fs::remove_file(&path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(super::io_error(state_dir, &path, "remove", &e))
        }
        _ => Ok(()),
    }
}

/// How old a temporary file of a record must be to be taken as left by a
/// writer that was killed.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes the records of `pushes/` beyond the newest `keep` (push ids
/// start with their UTC time, so their names sort oldest first), but never
/// one a resume still needs: that of the push of the last run of a work
/// tree (`needed`), the only one `phasegate resume` reads. Without this the
/// directory grows by a file with every interrupted push that is never
/// resumed. What a writer killed mid-write left (`.<push id>.json.tmp-<pid>`,
/// never read as a record) goes once it is an hour old: a writer takes
/// milliseconds. `needed` is asked only when there are records beyond
/// `keep`, as it reads the history. A file that cannot be removed is added
/// to `left`.
pub fn prune_unreached(
    state_dir: &Path,
    keep: usize,
    needed: impl FnOnce() -> Option<Vec<String>>,
    left: &mut Vec<(PathBuf, io::Error)>,
) -> usize {
    let Ok(entries) = fs::read_dir(state_dir.join("pushes")) else {
        return 0;
    };
    let mut records = Vec::new();
    let mut removed = 0;
    let mut remove =
        |path: PathBuf, left: &mut Vec<(PathBuf, io::Error)>| match fs::remove_file(&path) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => left.push((path, e)),
        };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(push) = name.strip_suffix(".json") {
            if unreached_file(state_dir, push).is_some() {
                records.push(push.to_string());
            }
        } else if name.starts_with('.') && name.contains(".json.tmp-") {
            let abandoned = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .ok()
                .and_then(|written| written.elapsed().ok())
                .is_some_and(|age| age >= ABANDONED_AFTER);
            if abandoned {
                remove(entry.path(), left);
            }
        }
    }
    records.sort();
    let excess = records.len().saturating_sub(keep);
    if excess == 0 {
        return removed;
    }
    // Only while the history can be read, which says which a resume needs.
    let Some(needed) = needed() else {
        return removed;
    };
    for push in &records[..excess] {
        if needed.contains(push) {
            continue;
        }
        if let Some(path) = unreached_file(state_dir, push) {
            remove(path, left);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refs_a_push_did_not_reach_are_kept_until_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let push = "20261125T013439Z-20964.000000042";
        assert_eq!(unreached(dir.path(), push).unwrap(), None);
        let one = SelectionRecord {
            mode: "all".to_string(),
            to: Some("a".repeat(40)),
            pushed_ref: Some("refs/heads/x".to_string()),
            push: Some(push.to_string()),
            ..SelectionRecord::default()
        };
        record_unreached(
            &crate::state::umask_dir(dir.path()),
            push,
            ".",
            vec![one.clone()],
        )
        .unwrap();
        let read = unreached(dir.path(), push).unwrap().unwrap();
        assert_eq!((read.work_tree.as_str(), read.refs), (".", vec![one]));
        forget_unreached(dir.path(), push).unwrap();
        assert_eq!(unreached(dir.path(), push).unwrap(), None);
        forget_unreached(dir.path(), push).unwrap();
    }

    #[test]
    fn a_push_id_that_is_not_one_names_no_file() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["", "../state", "a/b", ".hidden"] {
            assert_eq!(unreached_file(dir.path(), bad), None, "{bad}");
            assert_eq!(unreached(dir.path(), bad).unwrap(), None);
            assert!(
                record_unreached(&crate::state::umask_dir(dir.path()), bad, ".", Vec::new())
                    .is_err()
            );
        }
    }
}
