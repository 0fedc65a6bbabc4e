//! The configuration files git includes only under a condition on where the
//! repository is or which branch it is on (`includeIf "gitdir:…"`,
//! `"gitdir/i:…"`, `"onbranch:…"`): true of the user's repository, false of
//! a temporary checkout of it, whose git directory is elsewhere and whose
//! `HEAD` is detached. Finds those the repository includes and the checkout
//! would not, so that the checkout's configuration includes them as they
//! are. Reads the configuration, never writes it.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use git2::Repository;

use super::filters::Place;

/// The conditions whose truth depends on the repository's place or branch.
/// (`hasconfig:remote.*.url:` holds alike in the checkout, whose
/// configuration includes the repository's.)
const PLACED: &str = r"^includeif\.(gitdir|gitdir/i|onbranch):.*\.path$";

/// A file the repository includes under a condition the checkout does not
/// meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Include {
    /// The file, as git resolved it.
    pub path: PathBuf,
    /// Included from the system or global configuration, which the
    /// repository's own settings override; else from the repository's
    /// (or the command line's), which override it.
    pub before_local: bool,
}

/// Whether a configuration file read for `repo` includes a file under a
/// condition on the repository's place or branch. libgit2 has read every
/// file already, so this asks no process: the rare configuration that has
/// one pays for `lost_in`, no other.
pub(super) fn may_differ(repo: &Repository) -> bool {
    let Ok(config) = repo.config() else {
        return false;
    };
    let Ok(mut entries) = config.entries(Some(PLACED)) else {
        return false;
    };
    matches!(entries.next(), Some(Ok(_)))
}

/// The files the repository (`real`) includes under a condition on its
/// place or branch and the checkout (`checkout`) does not include, in the
/// order git reads them. git says both what it includes and where from:
/// an include's path relative to the file that names it, `~/`, and
/// whether the condition holds are git's to decide, not guessed here.
pub(super) fn lost_in(real: &Place, checkout: &Place) -> io::Result<Vec<Include>> {
    let wanted = conditional_includes(real)?;
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let included = origins(real)?;
    let active: Vec<Include> = wanted
        .into_iter()
        .filter(|include| included.contains(include.path.as_os_str().as_bytes()))
        .collect();
    if active.is_empty() {
        return Ok(active);
    }
    let there = origins(checkout)?;
    Ok(active
        .into_iter()
        .filter(|include| !there.contains(include.path.as_os_str().as_bytes()))
        .collect())
}

/// Every conditional include on the repository's place or branch of
/// `place`'s configuration, its path as git resolves it (whether or not
/// the condition holds).
fn conditional_includes(place: &Place) -> io::Result<Vec<Include>> {
    let output = place
        .git()
        .args([
            "config",
            "-z",
            "--show-origin",
            "--show-scope",
            "--type=path",
        ])
        .args(["--get-regexp", PLACED])
        .output()?;
    // 1: no such setting.
    if output.status.code() == Some(1) {
        return Ok(Vec::new());
    }
    if !output.status.success() {
        return Err(failure(&output));
    }
    // Each entry is `scope NUL origin NUL key LF value NUL`.
    let mut fields = output.stdout.split(|&b| b == 0);
    let mut includes = Vec::new();
    while let (Some(scope), Some(origin), Some(entry)) =
        (fields.next(), fields.next(), fields.next())
    {
        let Some(value) = entry
            .iter()
            .position(|&b| b == b'\n')
            .map(|at| &entry[at + 1..])
        else {
            continue;
        };
        // The user's work tree's own settings (`config.worktree`) are
        // not the checkout's; an include named on the command line is
        // passed to the checks as it was given.
        let Some(file) = origin.strip_prefix(b"file:") else {
            continue;
        };
        if scope == b"worktree" || value.is_empty() {
            continue;
        }
        includes.push(Include {
            path: resolved(file, value),
            before_local: matches!(scope, b"system" | b"global"),
        });
    }
    Ok(includes)
}

/// The path of an include whose value is `value` (`~` expanded already),
/// named in the file `from`: git takes a relative one from that file's
/// directory, and names it so among the origins.
fn resolved(from: &[u8], value: &[u8]) -> PathBuf {
    if value.starts_with(b"/") {
        return PathBuf::from(OsStr::from_bytes(value));
    }
    let dir = from
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(&from[..0], |at| &from[..=at]);
    PathBuf::from(OsStr::from_bytes(&[dir, value].concat()))
}

/// The files `place`'s configuration was read from, included ones too.
fn origins(place: &Place) -> io::Result<HashSet<Vec<u8>>> {
    let output = place
        .git()
        .args(["config", "-z", "--show-origin", "--list"])
        .output()?;
    if !output.status.success() {
        return Err(failure(&output));
    }
    // Each entry is `origin NUL key LF value NUL`.
    let mut fields = output.stdout.split(|&b| b == 0);
    let mut files = HashSet::new();
    while let (Some(origin), Some(_)) = (fields.next(), fields.next()) {
        if let Some(file) = origin.strip_prefix(b"file:") {
            files.insert(file.to_vec());
        }
    }
    Ok(files)
}

fn failure(output: &std::process::Output) -> io::Error {
    io::Error::other(format!(
        "`git config` failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn an_include_s_path_is_taken_from_the_directory_of_the_file_naming_it() {
        assert_eq!(
            resolved(b"/home/u/.gitconfig", b"work.inc"),
            Path::new("/home/u/work.inc")
        );
        assert_eq!(
            resolved(b".git/config", b"../shared.inc"),
            Path::new(".git/../shared.inc")
        );
        assert_eq!(
            resolved(b"/home/u/.gitconfig", b"/etc/x.inc"),
            Path::new("/etc/x.inc")
        );
    }
}
