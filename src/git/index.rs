//! A reader for git's index file (`.git/index`, versions 2 to 4), for the
//! two questions a staged run asks of every tracked file: is it staged, and
//! may it have unstaged changes. libgit2 answers both too, but hashes the
//! whole index on every load and walks every directory of the work tree;
//! on a large repository that is most of a run. An index this reader does
//! not know (a split or sparse index, another object format) is left to
//! libgit2.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Git's extended flag for `git add --intent-to-add` entries.
pub(super) const INTENT_TO_ADD: u16 = 1 << 13;
/// Git's extended flag for entries outside a sparse checkout.
pub(super) const SKIP_WORKTREE: u16 = 1 << 14;
/// The conflict stage in an entry's flags: 0 unless a merge left the path
/// unresolved (1 to 3 are its sides).
pub(super) const STAGE_MASK: u16 = 0x3000;
/// git's flag for `git update-index --assume-unchanged` entries.
pub(super) const ASSUME_UNCHANGED: u16 = 0x8000;
/// The file-type bits of a mode, and the types git records.
pub(super) const MODE_TYPE: u32 = 0o170_000;
pub(super) const MODE_FILE: u32 = 0o100_000;
/// A directory: in a tree, or in a sparse index.
pub(super) const MODE_TREE: u32 = 0o040_000;
pub(super) const MODE_LINK: u32 = 0o120_000;
/// A submodule: a commit, not a file.
pub(super) const MODE_GITLINK: u32 = 0o160_000;

/// One entry of the index: where its fields and its path lie in what was
/// read. Twelve bytes instead of the sixty its fields take decoded: the
/// index of a large repository is read on every run, and every page of
/// fresh memory costs a page fault.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    /// Where the entry's fields start in the index file.
    at: u32,
    /// Where its path lies (start, end): in the file itself, or for
    /// version 4 in the paths expanded from their prefix compression.
    path: (u32, u32),
}

/// An entry's fields, with the stat data git recorded for it.
#[derive(Debug, Clone, Default)]
pub(super) struct Fields {
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    pub ino: u32,
    pub mode: u32,
    pub size: u32,
    pub oid: [u8; 20],
    /// The conflict stage: 0 unless a merge left the path unresolved.
    pub stage: u8,
    pub extended: u16,
}

impl Fields {
    /// Reads the fields at the cursor (an entry's start), in the file's
    /// `version`; the cursor stops where the path begins.
    fn read(c: &mut Cursor<'_>, version: u32) -> Option<Fields> {
        let ctime = (c.u32()?, c.u32()?);
        let mtime = (c.u32()?, c.u32()?);
        let _dev = c.u32()?;
        let ino = c.u32()?;
        let mode = c.u32()?;
        let _uid = c.u32()?;
        let _gid = c.u32()?;
        let size = c.u32()?;
        let oid: [u8; 20] = c.take(20)?.try_into().ok()?;
        let flags = c.u16()?;
        let extended = if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            c.u16()?
        } else {
            0
        };
        Some(Fields {
            ctime,
            mtime,
            ino,
            mode,
            size,
            oid,
            stage: u8::try_from((flags & STAGE_MASK) >> 12).ok()?,
            extended,
        })
    }

    pub fn intent_to_add(&self) -> bool {
        self.extended & INTENT_TO_ADD != 0
    }

    pub fn is_gitlink(&self) -> bool {
        self.mode & MODE_TYPE == MODE_GITLINK
    }

    /// A stage-0 file or link whose content git tracks in the work tree.
    fn in_work_tree(&self) -> bool {
        self.stage == 0 && !self.is_gitlink() && self.extended & SKIP_WORKTREE == 0
    }

    /// A stage-0 file or link git was told to leave out of the work tree
    /// (`git update-index --skip-worktree`, or outside a sparse checkout).
    fn skips_work_tree(&self) -> bool {
        self.stage == 0 && !self.is_gitlink() && self.extended & SKIP_WORKTREE != 0
    }
}

/// Directories whose tree the index's cache-tree holds: (path with a
/// trailing `/`, tree id), sorted by path; the root is the empty path.
pub(super) type CachedTrees = Vec<(Vec<u8>, [u8; 20])>;

/// The entries of an index file, in its order (by path, then stage).
#[derive(Debug, Default)]
pub(super) struct Index {
    pub entries: Vec<Entry>,
    /// The file as read, which each entry's fields are decoded from.
    bytes: Vec<u8>,
    version: u32,
    /// Version 4's paths, expanded one after the other; the other
    /// versions keep each path whole in the file.
    expanded: Vec<u8>,
    /// The cache-tree extension (`TREE`): the directories whose tree git
    /// already knows.
    pub trees: CachedTrees,
    /// When the index file was last written: an entry modified in the same
    /// instant or later is "racily clean" and its stat data proves nothing.
    written: (i64, u32),
}

impl Index {
    /// The path of `entry`, relative to the work tree's root. Bytes, not
    /// text: file names need not be UTF-8.
    pub fn path(&self, entry: &Entry) -> &[u8] {
        let paths = if self.version == 4 {
            &self.expanded
        } else {
            &self.bytes
        };
        let (start, end) = entry.path;
        paths.get(start as usize..end as usize).unwrap_or_default()
    }

    /// The fields of `entry`, decoded. They were read once already when
    /// the file was, so this cannot fail; if it ever did, the default
    /// (no mode) makes the entry look changed, never unchanged.
    pub fn fields(&self, entry: &Entry) -> Fields {
        let mut c = Cursor {
            bytes: &self.bytes,
            at: entry.at as usize,
        };
        Fields::read(&mut c, self.version).unwrap_or_default()
    }

    /// The index file's bytes, as they were read.
    pub fn file_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// When the index file was last written, as it was read: a copy of it
    /// keeps this time, or git would take an entry that was racily clean
    /// (modified in that instant) for an unchanged one.
    pub fn written_at(&self) -> std::time::SystemTime {
        let (seconds, nanoseconds) = self.written;
        let since = |s: u64| std::time::Duration::new(s, nanoseconds);
        match u64::try_from(seconds) {
            Ok(s) => std::time::UNIX_EPOCH + since(s),
            Err(_) => std::time::UNIX_EPOCH,
        }
    }
}

/// The paths whose staged state (mode, blob, conflict stage) differs
/// between `before` and the index file at `path` now, added and removed
/// ones included: what someone staged since `before` was read. Nothing
/// when the file still ends with the same checksum (git writes a new one
/// whenever it writes the file), or when it is one this reader leaves to
/// libgit2.
pub(super) fn restaged(before: &Index, path: &Path) -> io::Result<Vec<Vec<u8>>> {
    use std::io::{Read, Seek, SeekFrom};
    let trailer = before
        .bytes
        .get(before.bytes.len().saturating_sub(TRAILER)..)
        .filter(|t| t.len() == TRAILER && t.iter().any(|&b| b != 0));
    if let Some(trailer) = trailer {
        let mut file = match fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let len = file.metadata()?.len();
        if len == before.bytes.len() as u64 {
            let mut now = [0u8; TRAILER];
            file.seek(SeekFrom::Start(len - TRAILER as u64))?;
            file.read_exact(&mut now)?;
            if now == trailer {
                return Ok(Vec::new());
            }
        }
    }
    let Some(now) = read(path)? else {
        return Ok(Vec::new());
    };
    let keys = |index: &Index| -> std::collections::BTreeMap<(Vec<u8>, u8), (u32, [u8; 20])> {
        index
            .entries
            .iter()
            .map(|e| {
                let f = index.fields(e);
                ((index.path(e).to_vec(), f.stage), (f.mode, f.oid))
            })
            .collect()
    };
    let (was, is) = (keys(before), keys(&now));
    let mut changed: Vec<Vec<u8>> = was
        .iter()
        .filter(|(key, value)| is.get(*key) != Some(*value))
        .chain(is.iter().filter(|(key, _)| !was.contains_key(*key)))
        .map(|((path, _), _)| path.clone())
        .collect();
    changed.sort();
    changed.dedup();
    Ok(changed)
}

/// Reads the index at `path`. `Ok(None)` for an index this reader leaves to
/// libgit2 (an unknown version or a required extension it does not know);
/// a missing index is an empty one (a repository with nothing added yet).
pub(super) fn read(path: &Path) -> io::Result<Option<Index>> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Some(Index::default())),
        Err(e) => return Err(e),
    };
    let meta = fs::metadata(path)?;
    let written = (meta.mtime(), u32::try_from(meta.mtime_nsec()).unwrap_or(0));
    Ok(
        parse(&bytes).map(|(entries, version, expanded, trees)| Index {
            entries,
            bytes,
            version,
            expanded,
            trees,
            written,
        }),
    )
}

/// A cursor over the index bytes; every read is bounds-checked, so a
/// truncated or corrupt file is `None`, never a panic.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn u32(&mut self) -> Option<u32> {
        let b = self.take(4)?;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }

    /// Bytes up to the next `end`, which is consumed.
    fn until(&mut self, end: u8) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let len = memchr::memchr(end, rest)?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// Version 4's prefix-compression length: git's "offset" varint.
    fn varint(&mut self) -> Option<usize> {
        let mut byte = self.take(1)?[0];
        let mut value = usize::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = self.take(1)?[0];
            value = value
                .checked_add(1)?
                .checked_mul(128)?
                .checked_add(usize::from(byte & 0x7f))?;
        }
        Some(value)
    }
}

/// The checksum that closes the file (SHA-1).
const TRAILER: usize = 20;

type Parsed = (Vec<Entry>, u32, Vec<u8>, CachedTrees);

fn parse(bytes: &[u8]) -> Option<Parsed> {
    let mut c = Cursor { bytes, at: 0 };
    if c.take(4)? != b"DIRC" {
        return None;
    }
    let version = c.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = usize::try_from(c.u32()?).ok()?;
    // Each entry takes at least 62 bytes: a count beyond that is corrupt.
    if count > bytes.len() / 62 {
        return None;
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(count);
    let mut expanded: Vec<u8> = Vec::new();
    // Version 4 writes each path as a change to the one before.
    let mut previous = 0..0;
    for _ in 0..count {
        let start = c.at;
        let fields = Fields::read(&mut c, version)?;
        let path = if version == 4 {
            let path_start = expanded.len();
            let strip = c.varint()?;
            let keep = previous.len().checked_sub(strip)?;
            expanded.extend_from_within(previous.start..previous.start + keep);
            expanded.extend_from_slice(c.until(0)?);
            previous = path_start..expanded.len();
            previous.clone()
        } else {
            let path_start = c.at;
            let path = path_start..path_start + c.until(0)?.len();
            // Entries are padded with NULs to a multiple of 8 bytes.
            let len = c.at - start;
            let padded = len.div_ceil(8) * 8;
            c.take(padded - len)?;
            path
        };
        // A directory entry belongs to a sparse index.
        if fields.mode & MODE_TYPE == MODE_TREE || path.is_empty() {
            return None;
        }
        entries.push(Entry {
            at: u32::try_from(start).ok()?,
            path: (
                u32::try_from(path.start).ok()?,
                u32::try_from(path.end).ok()?,
            ),
        });
    }
    // Extensions: optional ones (an upper-case signature) are caches this
    // reader does without; a required one (a split index's `link`, a
    // sparse index's `sdir`) changes what the entries mean.
    let mut trees = Vec::new();
    while bytes.len().saturating_sub(c.at) > TRAILER {
        let signature = c.take(4)?;
        if !signature[0].is_ascii_uppercase() {
            return None;
        }
        let len = usize::try_from(c.u32()?).ok()?;
        let data = c.take(len)?;
        if signature == b"TREE" {
            // A cache the reader can do without: a damaged one is ignored.
            let mut tree = Cursor { bytes: data, at: 0 };
            if cache_tree(&mut tree, &[], &mut trees).is_none() {
                trees.clear();
            }
        }
    }
    trees.sort_unstable();
    Some((entries, version, expanded, trees))
}

/// One node of the cache tree and, recursively, its subtrees: the valid
/// ones (an entry count of -1 marks a directory changed since) with their
/// full paths.
fn cache_tree(c: &mut Cursor<'_>, parent: &[u8], out: &mut Vec<(Vec<u8>, [u8; 20])>) -> Option<()> {
    let name = c.until(0)?;
    let mut path = parent.to_vec();
    if !name.is_empty() {
        path.extend_from_slice(name);
        path.push(b'/');
    }
    let number = |text: &[u8]| std::str::from_utf8(text).ok()?.parse::<i64>().ok();
    let entries = number(c.until(b' ')?)?;
    let subtrees = number(c.until(b'\n')?)?;
    if entries >= 0 {
        out.push((path.clone(), c.take(20)?.try_into().ok()?));
    }
    for _ in 0..subtrees {
        cache_tree(c, &path, out)?;
    }
    Some(())
}

/// The search for tracked files whose work-tree state may differ from the
/// index: the stat data git recorded no longer matches, the entry is racily
/// clean, or it is only intent-to-add. Everything else is unchanged, by the
/// same test git itself uses; the candidates still need their content
/// compared (with the repository's filters) to be sure.
///
/// Several threads can `work` on one scan at once: each takes the next
/// slice of entries until none is left, so a thread that joins late (after
/// other work) still shares the load evenly.
pub(super) struct Scan<'a> {
    /// The root's directory handle: each file is looked up relative to it.
    dir: Option<rustix::fd::OwnedFd>,
    index: &'a Index,
    next: std::sync::atomic::AtomicUsize,
    written: (i64, u32),
    check: StatCheck,
}

/// Which stat data the test compares, as the repository's git does: with
/// `core.trustCtime = false` the change time is left out, and with
/// `core.checkStat = minimal` nanoseconds and the inode number are too.
#[derive(Debug, Clone, Copy)]
pub(super) struct StatCheck {
    pub ctime: bool,
    pub minimal: bool,
}

impl Default for StatCheck {
    fn default() -> StatCheck {
        StatCheck {
            ctime: true,
            minimal: false,
        }
    }
}

impl StatCheck {
    /// The repository's settings; git's defaults where it has none.
    pub fn of(repo: &git2::Repository) -> StatCheck {
        let Ok(config) = repo.config() else {
            return StatCheck::default();
        };
        StatCheck {
            ctime: config.get_bool("core.trustctime").unwrap_or(true),
            minimal: config
                .get_string("core.checkstat")
                .is_ok_and(|v| v.eq_ignore_ascii_case("minimal")),
        }
    }
}

/// Entries a thread takes at a time.
const SLICE: usize = 256;

impl<'a> Scan<'a> {
    pub fn new(root: &Path, index: &'a Index, check: StatCheck) -> Scan<'a> {
        let dir = rustix::fs::open(
            root,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok();
        Scan {
            dir,
            index,
            next: std::sync::atomic::AtomicUsize::new(0),
            written: index.written,
            check,
        }
    }

    /// Runs `first` on this thread while `threads - 1` others scan (none
    /// for a small scan), then joins the scan: its result and the
    /// candidates, sorted.
    pub fn alongside<T>(&self, threads: usize, first: impl FnOnce() -> T) -> (T, Vec<Vec<u8>>) {
        let helpers = if self.index.entries.len() > 2 * SLICE {
            threads.clamp(1, 8) - 1
        } else {
            0
        };
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..helpers).map(|_| scope.spawn(|| self.work())).collect();
            let result = first();
            let mut candidates = self.work();
            for worker in workers {
                match worker.join() {
                    Ok(found) => candidates.extend(found),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            candidates.sort_unstable();
            (result, candidates)
        })
    }

    /// Looks at slices of entries until none is left; returns the
    /// candidates this thread found.
    fn work(&self) -> Vec<Vec<u8>> {
        use std::sync::atomic::Ordering;
        let mut out = Vec::new();
        let mut skipped = Vec::new();
        let mut dir = OpenDir::default();
        loop {
            let start = self.next.fetch_add(SLICE, Ordering::Relaxed);
            let Some(part) = self.index.entries.get(start..) else {
                break;
            };
            for entry in part.iter().take(SLICE) {
                let fields = self.index.fields(entry);
                if !fields.in_work_tree() {
                    if fields.skips_work_tree() {
                        skipped.push(entry);
                    }
                    continue;
                }
                let path = self.index.path(entry);
                if fields.intent_to_add() || self.differs(&fields, path, &mut dir) {
                    out.push(path.to_vec());
                }
            }
        }
        // git commits a skip-worktree file's staged content whatever the
        // work tree holds: a file there all the same (a local version kept
        // with `--skip-worktree`) has its content compared, as git itself
        // does once a sparse checkout finds one. Looked at apart from the
        // loop above, whose every file this would slow down.
        for entry in skipped {
            let path = self.index.path(entry);
            if self.present(path) {
                out.push(path.to_vec());
            }
        }
        out
    }

    /// Whether the work tree holds something at `path`.
    fn present(&self, path: &[u8]) -> bool {
        self.dir.as_ref().is_none_or(|root| {
            rustix::fs::statat(root, path, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
        })
    }

    fn differs(&self, entry: &Fields, path: &'a [u8], dir: &mut OpenDir<'a>) -> bool {
        // Without the root's handle every file is a candidate, and the
        // comparison that follows reports what is wrong.
        let Some(root) = &self.dir else {
            return true;
        };
        let seen = dir.stat(root, path);
        differs(entry, seen.ok().map(Seen::from), self.written, self.check)
    }
}

/// The directory a scanning thread looked in last, kept open: entries come
/// sorted, so a directory's files follow one another, and each is looked
/// up by its name alone instead of its whole path.
#[derive(Default)]
struct OpenDir<'a> {
    path: Option<&'a [u8]>,
    handle: Option<rustix::fd::OwnedFd>,
}

impl<'a> OpenDir<'a> {
    /// `path`'s stat data, without following a symbolic link at its end.
    fn stat(
        &mut self,
        root: &rustix::fd::OwnedFd,
        path: &'a [u8],
    ) -> rustix::io::Result<rustix::fs::Stat> {
        use rustix::fs::{AtFlags, Mode, OFlags};
        let Some(slash) = memchr::memrchr(b'/', path) else {
            return rustix::fs::statat(root, path, AtFlags::SYMLINK_NOFOLLOW);
        };
        let (parent, name) = (&path[..slash], &path[slash + 1..]);
        if self.path != Some(parent) {
            self.path = Some(parent);
            self.handle = rustix::fs::openat(
                root,
                parent,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok();
        }
        match &self.handle {
            Some(handle) => rustix::fs::statat(handle, name, AtFlags::SYMLINK_NOFOLLOW),
            // The directory is gone or is not one: the whole path says why.
            None => rustix::fs::statat(root, path, AtFlags::SYMLINK_NOFOLLOW),
        }
    }
}

/// A file's stat data, in the index's terms.
struct Seen {
    /// The file type bits of the mode.
    kind: u32,
    executable: bool,
    mtime: (u32, u32),
    ctime: (u32, u32),
    ino: u32,
    size: u32,
}

impl From<rustix::fs::Stat> for Seen {
    fn from(st: rustix::fs::Stat) -> Seen {
        let mode = low32(st.st_mode);
        Seen {
            kind: mode & MODE_TYPE,
            executable: mode & 0o100 != 0,
            mtime: (low32(st.st_mtime), low32(st.st_mtime_nsec)),
            ctime: (low32(st.st_ctime), low32(st.st_ctime_nsec)),
            ino: low32(st.st_ino),
            size: low32(st.st_size),
        }
    }
}

/// The low 32 bits of a stat field, which is what the index keeps. The
/// fields' types differ between architectures; all of them fit an `i128`.
fn low32(value: impl Into<i128>) -> u32 {
    let [a, b, c, d, ..] = value.into().to_le_bytes();
    u32::from_le_bytes([a, b, c, d])
}

/// Whether the file may differ from its entry: git's stat test, made
/// stricter rather than looser where the two could disagree (any doubt
/// only costs a content comparison). `None`: the file is gone or cannot be
/// looked at.
fn differs(entry: &Fields, seen: Option<Seen>, written: (i64, u32), check: StatCheck) -> bool {
    let Some(seen) = seen else {
        return true;
    };
    let expected = entry.mode & MODE_TYPE;
    if seen.kind != expected || (expected != MODE_FILE && expected != MODE_LINK) {
        return true;
    }
    if expected == MODE_FILE && (entry.mode & 0o100 != 0) != seen.executable {
        return true;
    }
    // Nanoseconds count only when they were recorded.
    let same_time = |recorded: (u32, u32), now: (u32, u32)| {
        recorded.0 == now.0 && (check.minimal || recorded.1 == 0 || recorded.1 == now.1)
    };
    if !same_time(entry.mtime, seen.mtime)
        || (check.ctime && !same_time(entry.ctime, seen.ctime))
        || (!check.minimal && entry.ino != 0 && entry.ino != seen.ino)
        || entry.size != seen.size
    {
        return true;
    }
    // Racily clean: modified in the instant the index was written, or after.
    let modified = (i64::from(entry.mtime.0), entry.mtime.1);
    modified.0 > written.0
        || (modified.0 == written.0 && (modified.1 == 0 || modified.1 >= written.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(mode: u32, mtime: (u32, u32), size: u32) -> Fields {
        Fields {
            ctime: mtime,
            mtime,
            ino: 7,
            mode,
            size,
            oid: [0; 20],
            stage: 0,
            extended: 0,
        }
    }

    #[expect(clippy::unnecessary_wraps, reason = "what `differs` takes")]
    fn seen(kind: u32, executable: bool, time: (u32, u32), size: u32) -> Option<Seen> {
        Some(Seen {
            kind,
            executable,
            mtime: time,
            ctime: time,
            ino: 7,
            size,
        })
    }

    const FILE: u32 = 0o100_644;
    const EXEC: u32 = 0o100_755;
    const WRITTEN: (i64, u32) = (1000, 500);

    #[test]
    fn stat_fields_keep_their_low_32_bits_as_git_does() {
        assert_eq!(low32(5_u32), 5);
        assert_eq!(low32(0x1_0000_0007_u64), 7);
        assert_eq!(low32(-1_i64), u32::MAX);
        assert_eq!(low32(i64::MIN + 3), 3);
    }

    #[test]
    fn matching_stat_data_older_than_the_index_is_unchanged() {
        let e = entry(FILE, (999, 10), 5);
        assert!(!differs(
            &e,
            seen(MODE_FILE, false, (999, 10), 5),
            WRITTEN,
            StatCheck::default()
        ));
    }

    #[test]
    fn any_difference_in_the_stat_data_makes_a_candidate() {
        let e = entry(FILE, (999, 10), 5);
        assert!(differs(&e, None, WRITTEN, StatCheck::default()), "deleted");
        assert!(
            differs(
                &e,
                seen(MODE_FILE, false, (999, 10), 6),
                WRITTEN,
                StatCheck::default()
            ),
            "size"
        );
        assert!(
            differs(
                &e,
                seen(MODE_FILE, false, (999, 11), 5),
                WRITTEN,
                StatCheck::default()
            ),
            "ns"
        );
        assert!(
            differs(
                &e,
                seen(MODE_FILE, false, (998, 10), 5),
                WRITTEN,
                StatCheck::default()
            ),
            "s"
        );
        assert!(
            differs(
                &e,
                seen(MODE_FILE, true, (999, 10), 5),
                WRITTEN,
                StatCheck::default()
            ),
            "+x"
        );
        assert!(
            differs(
                &e,
                seen(MODE_LINK, false, (999, 10), 5),
                WRITTEN,
                StatCheck::default()
            ),
            "link"
        );
        assert!(
            differs(
                &e,
                seen(MODE_TREE, false, (999, 10), 5),
                WRITTEN,
                StatCheck::default()
            ),
            "dir"
        );
        let x = entry(EXEC, (999, 10), 5);
        assert!(
            differs(
                &x,
                seen(MODE_FILE, false, (999, 10), 5),
                WRITTEN,
                StatCheck::default()
            ),
            "-x"
        );
        let mut other_inode = seen(MODE_FILE, false, (999, 10), 5);
        if let Some(s) = other_inode.as_mut() {
            s.ino = 8;
        }
        assert!(
            differs(&e, other_inode, WRITTEN, StatCheck::default()),
            "inode"
        );
    }

    #[test]
    fn racily_clean_entries_are_candidates() {
        // Modified in the instant the index was written, or after.
        for mtime in [(1000, 500), (1000, 900), (1001, 0), (1000, 0)] {
            let e = entry(FILE, mtime, 5);
            assert!(
                differs(
                    &e,
                    seen(MODE_FILE, false, mtime, 5),
                    WRITTEN,
                    StatCheck::default()
                ),
                "{mtime:?}"
            );
        }
        let e = entry(FILE, (1000, 499), 5);
        assert!(!differs(
            &e,
            seen(MODE_FILE, false, (1000, 499), 5),
            WRITTEN,
            StatCheck::default()
        ));
    }

    #[test]
    fn nanoseconds_count_only_when_recorded() {
        // git built without nanosecond support writes 0.
        let e = entry(FILE, (999, 0), 5);
        assert!(!differs(
            &e,
            seen(MODE_FILE, false, (999, 123), 5),
            WRITTEN,
            StatCheck::default()
        ));
    }

    #[test]
    fn the_repository_can_leave_ctime_and_fine_stat_data_out() {
        let e = entry(FILE, (999, 10), 5);
        let seen_with = |ctime: (u32, u32), mtime: (u32, u32), ino: u32| {
            let mut seen = seen(MODE_FILE, false, mtime, 5);
            if let Some(s) = seen.as_mut() {
                s.ctime = ctime;
                s.ino = ino;
            }
            seen
        };
        let no_ctime = StatCheck {
            ctime: false,
            minimal: false,
        };
        let minimal = StatCheck {
            ctime: true,
            minimal: true,
        };
        // Only the change time moved (a chmod to the same mode, a backup tool).
        let ctime_moved = seen_with((1005, 3), (999, 10), 7);
        assert!(differs(&e, ctime_moved, WRITTEN, StatCheck::default()));
        assert!(!differs(
            &e,
            seen_with((1005, 3), (999, 10), 7),
            WRITTEN,
            no_ctime
        ));
        // Nanoseconds and the inode number left out, whole seconds kept.
        let fine = seen_with((999, 77), (999, 77), 8);
        assert!(differs(&e, fine, WRITTEN, StatCheck::default()));
        assert!(!differs(
            &e,
            seen_with((999, 77), (999, 77), 8),
            WRITTEN,
            minimal
        ));
        assert!(differs(
            &e,
            seen_with((999, 10), (998, 10), 7),
            WRITTEN,
            minimal
        ));
        assert!(differs(
            &e,
            seen_with((999, 10), (999, 10), 7).map(|mut s| {
                s.size = 6;
                s
            }),
            WRITTEN,
            minimal
        ));
        // Racily clean stays a candidate whatever the settings.
        let racy = entry(FILE, (1000, 600), 5);
        assert!(differs(
            &racy,
            seen(MODE_FILE, false, (1000, 600), 5),
            WRITTEN,
            minimal
        ));
    }

    #[test]
    fn the_settings_are_read_from_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let check = StatCheck::of(&repo);
        assert!(check.ctime && !check.minimal);
        let mut config = repo.config().unwrap();
        config.set_bool("core.trustCtime", false).unwrap();
        config.set_str("core.checkStat", "minimal").unwrap();
        let check = StatCheck::of(&repo);
        assert!(!check.ctime && check.minimal);
    }

    /// A real index written by git, at `version`.
    fn git_index(version: &str) -> (tempfile::TempDir, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| crate::git::test_git(dir.path(), args);
        git(&["init", "-q"]);
        for name in ["b.txt", "a/one.rs", "a/two.rs", "a b.txt", "z\nnl.txt"] {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, name).unwrap();
        }
        git(&["add", "-A"]);
        std::fs::write(dir.path().join("ita.txt"), "x").unwrap();
        git(&["add", "-N", "ita.txt"]);
        git(&["update-index", "--index-version", version]);
        let listing = git(&["ls-files", "-s", "-z"]);
        (dir, listing)
    }

    #[test]
    fn reads_what_git_writes_in_versions_2_to_4() {
        // Version 2 cannot hold the intent-to-add flag: git writes 3.
        for version in ["2", "3", "4"] {
            let (dir, listing) = git_index(version);
            let index = read(&dir.path().join(".git/index")).unwrap().unwrap();
            let mine: Vec<Vec<u8>> = index
                .entries
                .iter()
                .map(|e| {
                    let f = index.fields(e);
                    let oid = git2::Oid::from_bytes(&f.oid).unwrap().to_string();
                    let mut line = format!("{:o} {oid} {}\t", f.mode, f.stage).into_bytes();
                    line.extend_from_slice(index.path(e));
                    line
                })
                .collect();
            let git: Vec<Vec<u8>> = listing
                .split(|b| *b == 0)
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec)
                .collect();
            assert_eq!(mine, git, "index version {version}");
            let ita: Vec<&Entry> = index
                .entries
                .iter()
                .filter(|e| index.fields(e).intent_to_add())
                .collect();
            assert_eq!(ita.len(), 1);
            assert_eq!(index.path(ita[0]), b"ita.txt");
        }
    }

    #[test]
    fn a_truncated_or_damaged_index_is_left_to_libgit2_never_a_panic() {
        for version in ["2", "4"] {
            let (dir, _) = git_index(version);
            let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
            assert!(parse(&bytes).is_some());
            for cut in 0..bytes.len().saturating_sub(TRAILER) {
                let _ = parse(&bytes[..cut]);
            }
            let mut flipped = bytes.clone();
            for at in (12..flipped.len()).step_by(7) {
                flipped[at] ^= 0xff;
                let _ = parse(&flipped);
            }
        }
        assert!(
            parse(b"DIRC\0\0\0\x05\0\0\0\0").is_none(),
            "unknown version"
        );
        assert!(parse(b"not an index").is_none());
    }

    #[test]
    fn a_split_index_is_left_to_libgit2() {
        let (dir, _) = git_index("2");
        crate::git::test_git(dir.path(), &["update-index", "--split-index"]);
        assert!(read(&dir.path().join(".git/index")).unwrap().is_none());
    }

    #[test]
    fn the_cache_tree_holds_the_trees_git_wrote() {
        let (dir, _) = git_index("2");
        let git = |args: &[&str]| {
            let out = crate::git::test_git(dir.path(), args);
            String::from_utf8(out).unwrap().trim().to_string()
        };
        // git leaves the root's tree unknown while an entry is only
        // intent-to-add.
        git(&["rm", "-q", "--cached", "ita.txt"]);
        git(&["write-tree"]);
        let index = read(&dir.path().join(".git/index")).unwrap().unwrap();
        let id = |path: &[u8]| {
            index
                .trees
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, id)| git2::Oid::from_bytes(id).unwrap().to_string())
        };
        assert_eq!(id(b""), Some(git(&["write-tree"])));
        let a = git(&["rev-parse", &format!("{}:a", git(&["write-tree"]))]);
        assert_eq!(id(b"a/"), Some(a));
        // A change to a/ invalidates a/ and the root, nothing else.
        std::fs::write(dir.path().join("a/one.rs"), "changed").unwrap();
        git(&["add", "a/one.rs"]);
        let index = read(&dir.path().join(".git/index")).unwrap().unwrap();
        let paths: Vec<&[u8]> = index.trees.iter().map(|(p, _)| p.as_slice()).collect();
        assert!(!paths.contains(&b"".as_slice()) && !paths.contains(&b"a/".as_slice()));
    }

    #[test]
    fn a_missing_index_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let index = read(&dir.path().join("index")).unwrap().unwrap();
        assert!(index.entries.is_empty());
    }
}
