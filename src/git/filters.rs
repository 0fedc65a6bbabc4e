//! The content filters git runs and libgit2 does not: a `filter=<driver>`
//! attribute whose driver is a program (`filter.<driver>.clean`, `.smudge`
//! or `.process`), as git-lfs and git-crypt install. For the few paths that
//! have one, phasegate asks the real git, which runs the driver: to clean
//! work-tree content before comparing it with the index, and to smudge
//! staged content before a check reads it. Reads the repository and writes
//! only the files it is given.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use git2::{AttrCheckFlags, AttrValue, Repository};

use super::index::{MODE_FILE, MODE_TYPE};

/// Paths given to one `git hash-object`, well under the argument limit.
const BATCH: usize = 512;

/// The filter drivers the repository's configuration defines, by name,
/// with what each can do.
#[derive(Debug, Default)]
pub(super) struct Drivers {
    clean: HashSet<Vec<u8>>,
    smudge: HashSet<Vec<u8>>,
}

/// Which way content goes through a filter.
#[derive(Debug, Clone, Copy)]
pub(super) enum Way {
    /// Work tree to index (`clean`).
    In,
    /// Index to work tree (`smudge`).
    Out,
}

impl Drivers {
    /// The drivers of `repo`'s configuration; none when it cannot be read
    /// (libgit2 reads it the same way, so nothing would be filtered).
    pub fn of(repo: &Repository) -> Drivers {
        let mut drivers = Drivers::default();
        let Ok(config) = repo.config() else {
            return drivers;
        };
        let Ok(mut entries) = config.entries(Some(r"^filter\..+\.(clean|smudge|process)$")) else {
            return drivers;
        };
        while let Some(Ok(entry)) = entries.next() {
            // `filter.<driver>.<key>`: the driver's name may hold dots.
            let Some(name) = entry.name_bytes().strip_prefix(b"filter.") else {
                continue;
            };
            let Some(dot) = name.iter().rposition(|&b| b == b'.') else {
                continue;
            };
            if entry.value_bytes().is_empty() {
                continue;
            }
            let (driver, key) = (name[..dot].to_vec(), &name[dot + 1..]);
            if key.eq_ignore_ascii_case(b"clean") || key.eq_ignore_ascii_case(b"process") {
                drivers.clean.insert(driver.clone());
            }
            if key.eq_ignore_ascii_case(b"smudge") || key.eq_ignore_ascii_case(b"process") {
                drivers.smudge.insert(driver);
            }
        }
        drivers
    }

    pub fn is_empty(&self) -> bool {
        self.clean.is_empty() && self.smudge.is_empty()
    }

    /// Whether git runs a program on `path`'s content going `way`.
    pub fn filters(&self, repo: &Repository, path: &[u8], way: Way) -> bool {
        let (set, flags) = match way {
            Way::In => (&self.clean, AttrCheckFlags::FILE_THEN_INDEX),
            Way::Out => (&self.smudge, AttrCheckFlags::INDEX_THEN_FILE),
        };
        if set.is_empty() {
            return false;
        }
        let Ok(Some(value)) =
            repo.get_attr_bytes(Path::new(OsStr::from_bytes(path)), "filter", flags)
        else {
            return false;
        };
        match AttrValue::from_bytes(Some(value)) {
            AttrValue::String(name) => set.contains(name.as_bytes()),
            AttrValue::Bytes(name) => set.contains(name),
            _ => false,
        }
    }
}

/// Where `git` must look: the repository, its work tree and the index git
/// named, whatever environment phasegate was started in.
#[derive(Debug, Clone)]
pub(super) struct Place {
    git_dir: PathBuf,
    root: PathBuf,
    index: PathBuf,
}

impl Place {
    pub fn of(repo: &Repository, root: &Path) -> Place {
        Place {
            git_dir: repo.path().to_path_buf(),
            root: root.to_path_buf(),
            index: super::index_path(repo),
        }
    }

    fn git(&self) -> Command {
        let mut command = Command::new("git");
        command.current_dir(&self.root);
        // The repository is named below; the configuration git was given
        // for this command (`git -c … commit`) stays, as git passes it on
        // to the filters it runs itself.
        for key in crate::runner::GIT_LOCAL_ENV {
            if !key.starts_with("GIT_CONFIG") {
                command.env_remove(key);
            }
        }
        command
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.root)
            .env("GIT_INDEX_FILE", &self.index)
            .stdin(Stdio::null())
            .stderr(Stdio::piped());
        command
    }
}

fn failure(what: &str, output: &std::process::Output) -> io::Error {
    let stderr = String::from_utf8_lossy(&output.stderr);
    io::Error::other(format!(
        "`git {what}` failed ({}): {}",
        output.status,
        stderr.trim()
    ))
}

/// Of `paths` (files in the work tree), those whose content,
/// cleaned by git as it would be staged, is what the index holds for them
/// (`staged`: each path's index object id, as hex).
pub(super) fn clean_as_staged(
    place: &Place,
    paths: &[(Vec<u8>, String)],
) -> io::Result<HashSet<Vec<u8>>> {
    let mut same = HashSet::new();
    for batch in paths.chunks(BATCH) {
        let mut command = place.git();
        command.arg("hash-object").arg("--");
        for (path, _) in batch {
            command.arg(OsStr::from_bytes(path));
        }
        let output = command.output()?;
        if !output.status.success() {
            return Err(failure("hash-object", &output));
        }
        let ids: Vec<&[u8]> = output.stdout.split(|&b| b == b'\n').collect();
        for ((path, staged), id) in batch.iter().zip(ids) {
            if id == staged.as_bytes() {
                same.insert(path.clone());
            }
        }
    }
    Ok(same)
}

/// A running `git cat-file --batch --filters`: staged content as git would
/// check it out, streamed to files one object at a time.
pub(super) struct Smudger {
    place: Place,
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    /// A name no object has, asked for after each object (see
    /// `write_batched`), and what git answers for it.
    end_name: String,
    end: Vec<u8>,
}

impl Smudger {
    pub fn start(place: &Place) -> io::Result<Smudger> {
        let mut child = place
            .git()
            .args(["cat-file", "--batch", "--filters"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("git cat-file has no pipes"));
        };
        // A name no object or ref has, and no file's content is likely to
        // hold: random for each run.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let name = format!("phasegate-end-{random:016x}");
        Ok(Smudger {
            place: place.clone(),
            child,
            input,
            output: BufReader::new(output),
            end: format!("\n{name} missing\n").into_bytes(),
            end_name: name,
        })
    }

    /// Writes object `id` (hex), smudged as `path` would be, to `out`.
    pub fn write(&mut self, id: &str, path: &[u8], out: &mut dyn Write) -> io::Result<()> {
        if path.contains(&b'\n') {
            return self.write_alone(id, path, out);
        }
        self.write_batched(id, path, out).map_err(|error| {
            // The batch says nothing of why; git on its own says what failed.
            match self.write_alone(id, path, &mut io::sink()) {
                Err(why) => why,
                Ok(()) => error,
            }
        })
    }

    fn write_batched(&mut self, id: &str, path: &[u8], out: &mut dyn Write) -> io::Result<()> {
        // git prints each object and flushes before it reads the next line.
        // The size in its header is the object's as stored, not as the
        // filter made it (a smudge program may make it longer or shorter):
        // the content ends where the answer to the next line, a name no
        // object has, begins.
        let mut line = format!("{id} ").into_bytes();
        line.extend_from_slice(path);
        line.push(b'\n');
        line.extend_from_slice(self.end_name.as_bytes());
        line.push(b'\n');
        self.input.write_all(&line)?;
        self.input.flush()?;
        let mut header = String::new();
        self.output.read_line(&mut header)?;
        let is_blob = header
            .trim_end()
            .strip_prefix(id)
            .and_then(|rest| rest.strip_prefix(" blob "))
            .is_some_and(|size| size.parse::<u64>().is_ok());
        if !is_blob {
            return Err(io::Error::other(format!(
                "`git cat-file` answered `{}` for {id}",
                header.trim_end()
            )));
        }
        // Streamed: all but what may be the start of the end is written as
        // it comes.
        let end = self.end.len();
        let mut held: Vec<u8> = Vec::with_capacity(64 * 1024 + end);
        loop {
            let chunk = self.output.fill_buf()?;
            if chunk.is_empty() {
                return Err(io::Error::other("`git cat-file`'s answer was cut short"));
            }
            held.extend_from_slice(chunk);
            let read = chunk.len();
            self.output.consume(read);
            // git writes nothing after the end until it is asked again.
            if held.ends_with(&self.end) {
                held.truncate(held.len() - end);
                return out.write_all(&held);
            }
            if held.len() > end {
                let ready = held.len() - end;
                out.write_all(&held[..ready])?;
                held.drain(..ready);
            }
        }
    }

    /// A path no batch line can hold (it has a newline), in a `git` of its
    /// own.
    fn write_alone(&self, id: &str, path: &[u8], out: &mut dyn Write) -> io::Result<()> {
        let mut path_arg = b"--path=".to_vec();
        path_arg.extend_from_slice(path);
        let output = self
            .place
            .git()
            .args(["cat-file", "--filters"])
            .arg(OsStr::from_bytes(&path_arg))
            .arg(id)
            .output()?;
        if !output.status.success() {
            return Err(failure("cat-file --filters", &output));
        }
        out.write_all(&output.stdout)
    }

    pub fn finish(mut self) -> io::Result<()> {
        drop(self.input);
        self.child.wait()?;
        Ok(())
    }
}

/// Rewrites those of `paths` (checked out from `index` under `dest`) that a
/// filter program smudges with their content as git checks it out: libgit2
/// wrote them as stored (an LFS pointer, ciphertext).
pub(super) fn smudge_checked_out(
    repo: &Repository,
    root: &Path,
    index: &git2::Index,
    paths: &[&[u8]],
    dest: &Path,
) -> io::Result<()> {
    let drivers = Drivers::of(repo);
    if drivers.smudge.is_empty() {
        return Ok(());
    }
    let mut smudger = None;
    for &path in paths {
        let Some(entry) = index.get_path(Path::new(OsStr::from_bytes(path)), 0) else {
            continue;
        };
        // Links and submodules are never filtered.
        if entry.mode & MODE_TYPE != MODE_FILE || !drivers.filters(repo, path, Way::Out) {
            continue;
        }
        let smudger = match &mut smudger {
            Some(smudger) => smudger,
            None => smudger.insert(Smudger::start(&Place::of(repo, root))?),
        };
        let target = dest.join(OsStr::from_bytes(path));
        let named = |e: io::Error| io::Error::new(e.kind(), format!("`{}`: {e}", target.display()));
        // Opened, not created: the file keeps the mode the checkout gave it.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&target)
            .map_err(named)?;
        smudger
            .write(&entry.id.to_string(), path, &mut file)
            .map_err(named)?;
    }
    match smudger {
        Some(smudger) => smudger.finish(),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_are_the_configured_programs_by_name_and_way() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| super::super::test_git(dir.path(), args);
        git(&["init", "-q"]);
        git(&["config", "filter.with.dots.clean", "cat"]);
        git(&["config", "filter.lfs.process", "git-lfs filter-process"]);
        git(&["config", "filter.off.required", "true"]);
        git(&["config", "filter.empty.smudge", ""]);
        std::fs::write(
            dir.path().join(".gitattributes"),
            "*.a filter=with.dots\n*.b filter=lfs\n*.c filter=off\n*.d filter=empty\n",
        )
        .unwrap();
        let repo = Repository::open(dir.path()).unwrap();
        let drivers = Drivers::of(&repo);
        let filtered = |path: &str, way| drivers.filters(&repo, path.as_bytes(), way);
        assert!(filtered("x.a", Way::In));
        assert!(!filtered("x.a", Way::Out), "it has no smudge program");
        assert!(filtered("dir/x.b", Way::In) && filtered("dir/x.b", Way::Out));
        for path in ["x.c", "x.d", "x.e"] {
            assert!(
                !filtered(path, Way::In) && !filtered(path, Way::Out),
                "{path}"
            );
        }
    }
}
