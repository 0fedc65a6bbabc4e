//! The content conversions git makes and libgit2 does not: a
//! `filter=<driver>` attribute whose driver is a program
//! (`filter.<driver>.clean`, `.smudge` or `.process`), as git-lfs and
//! git-crypt install, and a `working-tree-encoding` attribute (a UTF-16
//! file stored as UTF-8). For the few paths that have one, phasegate asks
//! the real git, which converts: to clean work-tree content before
//! comparing it with the index, and to smudge staged content before a
//! check reads it. Reads the repository and writes only the files it is
//! given.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use git2::{AttrCheckFlags, AttrValue, Repository};

use super::attributes;
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

    /// Whether git converts `path`'s content going `way` where libgit2
    /// would not: a filter program, or another encoding in the work tree.
    pub fn filters(&self, repo: &Repository, path: &[u8], way: Way) -> bool {
        let flags = match way {
            Way::In => AttrCheckFlags::FILE_THEN_INDEX,
            Way::Out => AttrCheckFlags::INDEX_THEN_FILE,
        };
        let attr = |name: &str| {
            let value = repo
                .get_attr_bytes(Path::new(OsStr::from_bytes(path)), name, flags)
                .ok()
                .flatten();
            match AttrValue::from_bytes(value) {
                AttrValue::String(value) => Some(value.as_bytes()),
                AttrValue::Bytes(value) => Some(value),
                _ => None,
            }
        };
        self.names(way)
            .iter()
            .any(|&name| attr(name).is_some_and(|value| self.converts(way, name, value)))
    }

    /// The attributes that can make git convert content going `way`:
    /// without a program for this way, no `filter` is worth a lookup.
    fn names(&self, way: Way) -> &'static [&'static str] {
        if self.programs(way).is_empty() {
            &[ENCODING]
        } else {
            &[FILTER, ENCODING]
        }
    }

    /// The drivers that run a program going `way`.
    fn programs(&self, way: Way) -> &HashSet<Vec<u8>> {
        match way {
            Way::In => &self.clean,
            Way::Out => &self.smudge,
        }
    }

    /// Whether the attribute `name` set to `value` makes git convert
    /// content going `way`.
    fn converts(&self, way: Way, name: &str, value: &[u8]) -> bool {
        match name {
            FILTER => self.programs(way).contains(value),
            ENCODING => !is_utf8(value),
            _ => false,
        }
    }

    /// Those of `paths` whose content git converts going `way` where
    /// libgit2 would not (see `filters`). `index` is the repository's, as
    /// read for this comparison or checkout.
    pub fn converted<'p>(
        &self,
        repo: &Repository,
        index: &git2::Index,
        place: &Place,
        paths: &[&'p [u8]],
        way: Way,
    ) -> io::Result<HashSet<&'p [u8]>> {
        if !attributes::may_name(repo, index, &place.root, paths, self.names(way)) {
            return Ok(HashSet::new());
        }
        if paths.len() <= ONE_BY_ONE {
            return Ok(paths
                .iter()
                .copied()
                .filter(|path| self.filters(repo, path, way))
                .collect());
        }
        let mut command = place.git();
        command.args(["check-attr", "-z", "--stdin"]);
        // What is checked out takes its attributes from the index, as in a
        // fresh clone; what is cleaned, from the work tree first.
        if matches!(way, Way::Out) {
            command.arg("--cached");
        }
        let mut child = command
            .args([FILTER, ENCODING])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let (Some(input), Some(mut output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("git check-attr has no pipes"));
        };
        // Written on a thread of its own: git answers as it reads, and
        // would stop once its answers filled the pipe.
        let answers = std::thread::scope(|scope| {
            // Dropped when written: git sees the end of its input.
            let writer = scope.spawn(move || -> io::Result<()> {
                let mut input = io::BufWriter::new(input);
                for path in paths {
                    input.write_all(path)?;
                    input.write_all(b"\0")?;
                }
                input.flush()
            });
            let mut answers = Vec::new();
            let read = io::Read::read_to_end(&mut output, &mut answers);
            let written = writer
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("writing to git check-attr failed")));
            read.and(written).map(|()| answers)
        });
        let status = child.wait_with_output()?;
        let answers = answers?;
        if !status.status.success() {
            return Err(failure("check-attr", &status));
        }
        let wanted: HashSet<&[u8]> = paths.iter().copied().collect();
        let mut converted = HashSet::new();
        let mut fields = answers.split(|&b| b == 0);
        while let (Some(path), Some(attr), Some(value)) =
            (fields.next(), fields.next(), fields.next())
        {
            // Not a value: the attribute is unset, set without one, or
            // not given at all.
            let given = matches!(value, b"unspecified" | b"set" | b"unset");
            let name = std::str::from_utf8(attr).unwrap_or_default();
            if !given && self.converts(way, name, value) {
                if let Some(path) = wanted.get(path) {
                    converted.insert(*path);
                }
            }
        }
        Ok(converted)
    }
}

/// The attributes by which git converts content libgit2 leaves as it is.
const FILTER: &str = "filter";
const ENCODING: &str = "working-tree-encoding";

/// Paths looked up one by one with libgit2 at most; more are asked of one
/// `git check-attr`, which costs a process but far less per path.
const ONE_BY_ONE: usize = 64;

/// Whether a `working-tree-encoding` names UTF-8, which git treats as no
/// conversion.
fn is_utf8(encoding: &[u8]) -> bool {
    encoding.eq_ignore_ascii_case(b"utf-8") || encoding.eq_ignore_ascii_case(b"utf8")
}

/// The attributes by which git (or libgit2) may write a file's content
/// otherwise than it is stored.
const CONVERTING: &[&str] = &["text", "eol", "crlf", "ident", FILTER, ENCODING];

/// Whether git writes each of `paths` out exactly as stored: no attribute
/// file names an attribute that converts content, and the configuration
/// converts nothing by itself (`core.autocrlf` false or `input`, `core.eol`
/// LF). `index` is the one they are checked out from.
pub(super) fn written_as_stored(
    repo: &Repository,
    index: &git2::Index,
    root: &Path,
    paths: &[&[u8]],
) -> bool {
    let Ok(config) = repo.config().and_then(|mut c| c.snapshot()) else {
        return false;
    };
    let absent = |e: &git2::Error| e.code() == git2::ErrorCode::NotFound;
    let autocrlf_off = match config.get_bool("core.autocrlf") {
        Ok(on) => !on,
        Err(e) if absent(&e) => true,
        Err(_) => config
            .get_str("core.autocrlf")
            .is_ok_and(|v| v.eq_ignore_ascii_case("input")),
    };
    let eol_lf = match config.get_str("core.eol") {
        Ok(v) => v.eq_ignore_ascii_case("lf") || v.eq_ignore_ascii_case("native"),
        Err(e) => absent(&e),
    };
    autocrlf_off && eol_lf && !attributes::may_name(repo, index, root, paths, CONVERTING)
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

    /// The repository whose git directory is `git_dir`, with its own index,
    /// and its work tree `root`: a temporary checkout.
    pub fn at(git_dir: &Path, root: &Path) -> Place {
        Place {
            git_dir: git_dir.to_path_buf(),
            root: root.to_path_buf(),
            index: git_dir.join("index"),
        }
    }

    /// `git` reaching this place, away from the repository variables
    /// phasegate was started with, reading nothing on its standard input.
    pub fn git(&self) -> Command {
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
/// check it out, streamed to files one object at a time. A filter program
/// may hang (git-lfs waiting on a server, a credential prompt): a Ctrl-C,
/// SIGTERM or SIGHUP ends it and its filters (see `Watch`), so that
/// phasegate can give the unstaged changes back and exit.
pub(super) struct Smudger {
    place: Place,
    /// `-c filter.<driver>.required=true` for each driver that smudges.
    required: Vec<std::ffi::OsString>,
    child: Child,
    /// Held while the filters run: ended with the `Smudger`.
    _watch: Watch,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    /// A name no object has, asked for after each object (see
    /// `write_batched`), and what git answers for it.
    end_name: String,
    end: Vec<u8>,
}

impl Smudger {
    /// Starts git for the filter programs of `drivers`. Each is taken as
    /// required: git would otherwise write the content as stored when a
    /// program fails (an LFS pointer, ciphertext), with a message nobody
    /// reads in a hook, and the checks would judge that. Required, git
    /// stops at the file, naming it and the driver.
    pub fn start(place: &Place, drivers: &Drivers) -> io::Result<Smudger> {
        let required = drivers
            .smudge
            .iter()
            // git splits `-c` at its first `=`: such a name cannot be given
            // (nor, in practice, configured).
            .filter(|driver| !driver.contains(&b'=') && !driver.contains(&b'\n'))
            .flat_map(|driver| {
                let mut setting = b"filter.".to_vec();
                setting.extend_from_slice(driver);
                setting.extend_from_slice(b".required=true");
                [
                    std::ffi::OsString::from("-c"),
                    OsStr::from_bytes(&setting).to_os_string(),
                ]
            })
            .collect::<Vec<_>>();
        let mut child = place
            .git()
            .args(&required)
            .args(["cat-file", "--batch", "--filters"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Its own process group, which its filters join: ended whole.
            .process_group(0)
            .spawn()?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("git cat-file has no pipes"));
        };
        let watch = Watch::start(child.id());
        // A name no object or ref has, and no file's content is likely to
        // hold: random for each run.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let name = format!("phasegate-end-{random:016x}");
        Ok(Smudger {
            place: place.clone(),
            required,
            child,
            _watch: watch,
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
            // Interrupted: the filter that hung would hang again.
            if crate::runner::interrupted() {
                return io::Error::new(io::ErrorKind::Interrupted, "interrupted");
            }
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
            .args(&self.required)
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

/// Ends a process group (`git cat-file` and the filters it runs) once
/// phasegate is interrupted: a thread that looks every 50 ms, until the
/// `Watch` is dropped.
struct Watch {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Watch {
    fn start(group: u32) -> Watch {
        use std::sync::atomic::Ordering;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = std::sync::Arc::clone(&done);
        let spawned = std::thread::Builder::new()
            .name("filter-watch".to_string())
            .spawn(move || {
                while !seen.load(Ordering::SeqCst) {
                    if crate::runner::interrupted() {
                        crate::runner::signal_group(group, crate::runner::SIGKILL);
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            });
        // Without the thread, an interrupt waits for the filters to end.
        drop(spawned);
        Watch { done }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The first of `paths` (checked out from `index`) that git refuses to
/// check out, with the name of the filter driver why: its `filter`
/// attribute names a driver marked `filter.<driver>.required` that has no
/// `smudge` or `process` command, and git stops there ("smudge filter
/// <driver> failed"). libgit2 would write the file as stored, content the
/// user's own checkout never had, and the checks would judge that.
pub(super) fn refused_checkout(
    repo: &Repository,
    root: &Path,
    index: &git2::Index,
    paths: &[&[u8]],
) -> io::Result<Option<(Vec<u8>, String)>> {
    let Ok(config) = repo.config().and_then(|mut c| c.snapshot()) else {
        return Ok(None);
    };
    let all = Drivers::of(repo);
    let mut required = Drivers::default();
    if let Ok(mut entries) = config.entries(Some(r"^filter\..+\.required$")) {
        while let Some(Ok(entry)) = entries.next() {
            let Ok(name) = entry.name() else { continue };
            let Some(driver) = name
                .strip_prefix("filter.")
                .and_then(|rest| rest.strip_suffix(".required"))
            else {
                continue;
            };
            // The last value set is the one git reads.
            let on = config.get_bool(name).unwrap_or(false);
            let driver = driver.as_bytes();
            if on && !all.smudge.contains(driver) {
                required.smudge.insert(driver.to_vec());
            }
        }
    }
    if required.smudge.is_empty() {
        return Ok(None);
    }
    let place = Place::of(repo, root);
    let refused = required.converted(repo, index, &place, paths, Way::Out)?;
    let Some(path) = paths.iter().find(|path| refused.contains(*path)) else {
        return Ok(None);
    };
    let driver = repo
        .get_attr_bytes(
            Path::new(OsStr::from_bytes(path)),
            FILTER,
            AttrCheckFlags::INDEX_THEN_FILE,
        )
        .ok()
        .flatten()
        .map(|value| String::from_utf8_lossy(value).into_owned())
        .unwrap_or_default();
    Ok(Some((path.to_vec(), driver)))
}

/// What a person reads of the smudge filter that failed for `path`: the
/// file, as the repository names it, and the filter driver.
fn smudge_failed(repo: &Repository, path: &[u8], error: io::Error) -> io::Error {
    if error.kind() == io::ErrorKind::Interrupted {
        return error;
    }
    let driver = repo
        .get_attr_bytes(
            Path::new(OsStr::from_bytes(path)),
            FILTER,
            AttrCheckFlags::INDEX_THEN_FILE,
        )
        .ok()
        .flatten()
        .map(|value| String::from_utf8_lossy(value).into_owned());
    let path = String::from_utf8_lossy(path);
    let message = match driver {
        Some(driver) => format!("the smudge filter `{driver}` failed on `{path}`: {error}"),
        // A `working-tree-encoding` git could not convert to.
        None => format!("git could not convert `{path}` for the work tree: {error}"),
    };
    io::Error::new(error.kind(), message)
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
    // Links and submodules are never filtered.
    let files: Vec<(&[u8], git2::IndexEntry)> = paths
        .iter()
        .filter_map(|&path| {
            let entry = index.get_path(Path::new(OsStr::from_bytes(path)), 0)?;
            (entry.mode & MODE_TYPE == MODE_FILE).then_some((path, entry))
        })
        .collect();
    let place = Place::of(repo, root);
    let listed: Vec<&[u8]> = files.iter().map(|(path, _)| *path).collect();
    let drivers = Drivers::of(repo);
    let converted = drivers.converted(repo, index, &place, &listed, Way::Out)?;
    let mut smudger = None;
    for (path, entry) in files {
        if !converted.contains(path) {
            continue;
        }
        let smudger = match &mut smudger {
            Some(smudger) => smudger,
            None => smudger.insert(Smudger::start(&place, &drivers)?),
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
            .map_err(|e| smudge_failed(repo, path, e))?;
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
    fn another_working_tree_encoding_converts_and_git_agrees_on_many_paths() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| super::super::test_git(dir.path(), args);
        git(&["init", "-q"]);
        git(&["config", "filter.lfs.process", "git-lfs filter-process"]);
        git(&["config", "filter.clean-only.clean", "cat"]);
        std::fs::write(
            dir.path().join(".gitattributes"),
            "[attr]wide working-tree-encoding=UTF-16BE\n*.lfs filter=lfs\n*.cln filter=clean-only\n*.u16 working-tree-encoding=UTF-16LE\n*.u8 working-tree-encoding=Utf-8\n*.m wide\nkeep/*.u16 -working-tree-encoding\n",
        )
        .unwrap();
        git(&["add", ".gitattributes"]);
        let repo = Repository::open(dir.path()).unwrap();
        let drivers = Drivers::of(&repo);
        let place = Place::of(&repo, dir.path());
        let kinds = ["lfs", "cln", "u16", "u8", "m", "txt"];
        let mut names: Vec<String> = (0..20)
            .flat_map(|i| kinds.map(|kind| format!("d{i}/f {i}.{kind}")))
            .collect();
        names.push("keep/x.u16".to_string());
        names.push("line\nbreak.u16".to_string());
        let paths: Vec<&[u8]> = names.iter().map(String::as_bytes).collect();
        assert!(paths.len() > ONE_BY_ONE);
        for way in [Way::In, Way::Out] {
            let index = repo.index().unwrap();
            let batch = drivers
                .converted(&repo, &index, &place, &paths, way)
                .unwrap();
            let alone: HashSet<&[u8]> = paths
                .iter()
                .copied()
                .filter(|path| drivers.filters(&repo, path, way))
                .collect();
            assert_eq!(batch, alone, "{way:?}");
            let has = |name: &str| batch.contains(name.as_bytes());
            assert!(has("d3/f 3.lfs") && has("d3/f 3.u16") && has("d3/f 3.m"));
            assert!(has("line\nbreak.u16"));
            assert_eq!(has("d3/f 3.cln"), matches!(way, Way::In), "{way:?}");
            assert!(!has("d3/f 3.u8") && !has("d3/f 3.txt") && !has("keep/x.u16"));
        }
    }

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
