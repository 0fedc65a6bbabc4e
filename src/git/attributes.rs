//! Whether any attribute file git reads could give a path an attribute,
//! known without asking git. Asking costs a `git check-attr` process, a few
//! milliseconds each time content is compared or checked out; most
//! repositories set no attribute that converts content, and reading their
//! few attribute files proves it. Only a "no" is trusted: when a source
//! cannot be located or read, the answer is "maybe", and git is asked.
//!
//! The sources are git's, all of them: the system file (where the `git` on
//! `PATH` says it is), the global file (`core.attributesFile`, else under
//! `XDG_CONFIG_HOME` or `HOME`), `info/attributes`, and every
//! `.gitattributes` on the paths' directories, in the work tree and in the
//! index. A macro (`[attr]name …`) names what it sets in one of them too.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use git2::{ErrorCode, Index, Repository};

/// What the environment says of where git finds attributes.
#[derive(Debug, Clone, Default)]
pub struct AttrEnv {
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`, when not empty.
    pub xdg_config_home: Option<PathBuf>,
    /// `GIT_ATTR_SOURCE` is set: git reads attributes from a tree instead.
    pub attr_source: bool,
    /// `PATH`, where the `git` phasegate runs is found.
    pub path: Option<OsString>,
    /// The directory phasegate started in (a relative `PATH` entry is
    /// relative to it).
    pub cwd: PathBuf,
}

static ENV: OnceLock<AttrEnv> = OnceLock::new();

/// Lets attribute lookups trust attribute files phasegate read itself.
/// Until this is called, git is always asked.
pub fn use_attr_env(env: AttrEnv) {
    let _ = ENV.set(env);
}

/// Whether an attribute file git reads for `paths` may name one of
/// `names`: `false` only when every source was read and none mentions any
/// of them (in any case, anywhere in the file).
pub(super) fn may_name(
    repo: &Repository,
    index: &Index,
    root: &Path,
    paths: &[&[u8]],
    names: &[&str],
) -> bool {
    let Some(env) = ENV.get() else {
        return true;
    };
    // The state directory all work trees share.
    let state = repo.commondir().join("phasegate");
    mentioned(repo, index, root, paths, env, &state, names).unwrap_or(true)
}

/// Whether some source mentions one of `names`; `None` when a source is
/// beyond knowing.
fn mentioned(
    repo: &Repository,
    index: &Index,
    root: &Path,
    paths: &[&[u8]],
    env: &AttrEnv,
    state: &Path,
    names: &[&str],
) -> Option<bool> {
    let found = |text: &[u8]| mentions(text, names);
    if env.attr_source {
        return None;
    }
    let config = repo.config().ok()?.snapshot().ok()?;
    // `attr.tree`: attributes from a tree phasegate would have to read.
    match config.get_bytes("attr.tree") {
        Err(e) if e.code() == ErrorCode::NotFound => {}
        _ => return None,
    }
    // Where the repository is shared, so is what phasegate remembers.
    let sharing = crate::state::Sharing::of_config(&config);
    let mut files = vec![system_file(env, state, sharing)?];
    files.extend(global_files(&config, root, env)?);
    files.push(repo.path().join("info/attributes"));
    files.push(repo.commondir().join("info/attributes"));
    for file in &files {
        if file_mentions(file, &found)? {
            return Some(true);
        }
    }
    // Each directory holding one of the paths, and its parents.
    let mut dirs: HashSet<&[u8]> = HashSet::from([&b""[..]]);
    for path in paths {
        for (at, _) in path.iter().enumerate().filter(|(_, &b)| b == b'/') {
            dirs.insert(&path[..=at]);
        }
    }
    for dir in dirs {
        let mut name = dir.to_vec();
        name.extend_from_slice(b".gitattributes");
        let name = Path::new(OsStr::from_bytes(&name));
        if file_mentions(&root.join(name), &found)? {
            return Some(true);
        }
        // Every stage: a conflicted file is read from one of them.
        for stage in 0..=3 {
            if let Some(entry) = index.get_path(name, stage) {
                let blob = repo.find_blob(entry.id).ok()?;
                if found(blob.content()) {
                    return Some(true);
                }
            }
        }
    }
    Some(false)
}

/// Whether `text` holds one of `names`, in any case.
fn mentions(text: &[u8], names: &[&str]) -> bool {
    names.iter().any(|name| {
        text.windows(name.len())
            .any(|window| window.eq_ignore_ascii_case(name.as_bytes()))
    })
}

/// Whether the file at `path` mentions what `found` looks for: `false`
/// when there is no such file, `None` when it cannot be read.
fn file_mentions(path: &Path, found: &dyn Fn(&[u8]) -> bool) -> Option<bool> {
    match fs::read(path) {
        Ok(text) => Some(found(&text)),
        Err(e) if is_absent(&e) => Some(false),
        Err(_) => None,
    }
}

fn is_absent(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// The global attribute files git may read: `core.attributesFile`, else
/// the default under `XDG_CONFIG_HOME` and the one under `HOME` (both read,
/// whichever git picks).
fn global_files(config: &git2::Config, root: &Path, env: &AttrEnv) -> Option<Vec<PathBuf>> {
    match config.get_bytes("core.attributesfile") {
        Ok(value) => Some(vec![expand(value, root, env)?]),
        Err(e) if e.code() == ErrorCode::NotFound => {
            let mut files = Vec::new();
            if let Some(xdg) = &env.xdg_config_home {
                files.push(xdg.join("git/attributes"));
            }
            if let Some(home) = &env.home {
                files.push(home.join(".config/git/attributes"));
            }
            Some(files)
        }
        Err(_) => None,
    }
}

/// A path from git's configuration, as git reads it: `~/` is `HOME`, a
/// relative path is relative to the work tree's root (where git runs).
/// `~user/` and `%(prefix)/` are beyond knowing here.
fn expand(value: &[u8], root: &Path, env: &AttrEnv) -> Option<PathBuf> {
    if value.is_empty() || value.starts_with(b"%(prefix)/") {
        return None;
    }
    if value == b"~" {
        return env.home.clone();
    }
    if let Some(rest) = value.strip_prefix(b"~/") {
        return Some(env.home.as_ref()?.join(OsStr::from_bytes(rest)));
    }
    if value.starts_with(b"~") {
        return None;
    }
    Some(root.join(OsStr::from_bytes(value)))
}

/// Where the `git` on `PATH` reads its system attributes, as it says
/// itself (`git var GIT_ATTR_SYSTEM`), remembered in `state` for as long
/// as that `git` is the same file. `None` when it cannot say (git before
/// 2.42, or no git).
fn system_file(env: &AttrEnv, state: &Path, sharing: crate::state::Sharing) -> Option<PathBuf> {
    let git = which::which_in("git", env.path.as_ref(), &env.cwd).ok()?;
    let meta = fs::metadata(&git).ok()?;
    let mut key = format!(
        "git {} {} {} {}.{} {}.{}\0",
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    )
    .into_bytes();
    key.extend_from_slice(git.as_os_str().as_bytes());
    key.push(0);
    let cache = state.join("git-system-attributes");
    if let Ok(known) = fs::read(&cache) {
        if let Some(answer) = known.strip_prefix(key.as_slice()) {
            return (!answer.is_empty()).then(|| PathBuf::from(OsStr::from_bytes(answer)));
        }
    }
    let answer = Command::new(&git)
        .args(["var", "GIT_ATTR_SYSTEM"])
        // git answers nothing when told to read no system file; the file
        // is read all the same, which only costs a read.
        .env_remove("GIT_ATTR_NOSYSTEM")
        .current_dir(&env.cwd)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| out.stdout)
        .and_then(|mut out| {
            (out.pop() == Some(b'\n') && !out.is_empty() && !out.contains(&b'\n')).then_some(out)
        })
        .unwrap_or_default();
    remember(&cache, &[key, answer.clone()].concat(), sharing);
    (!answer.is_empty()).then(|| PathBuf::from(OsString::from_vec(answer)))
}

/// Writes `content` to `cache` whole or not at all; a cache that cannot be
/// written is asked for again next time.
fn remember(cache: &Path, content: &[u8], sharing: crate::state::Sharing) {
    let Some(dir) = cache.parent() else {
        return;
    };
    let temp = dir.join(format!("git-system-attributes.{}", std::process::id()));
    // Shared, as all of the state, in a repository a group shares.
    let written = sharing
        .create_dirs(dir)
        .and_then(|()| fs::File::create(&temp))
        .and_then(|mut file| {
            sharing.share_file(&file)?;
            std::io::Write::write_all(&mut file, content)
        })
        .and_then(|()| fs::rename(&temp, cache));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["working-tree-encoding"];

    /// The `git` the tests run.
    fn real_git() -> PathBuf {
        which::which("git").unwrap()
    }

    struct Setup {
        dir: tempfile::TempDir,
        home: tempfile::TempDir,
        repo: Repository,
        env: AttrEnv,
    }

    impl Setup {
        fn new() -> Setup {
            let dir = tempfile::tempdir().unwrap();
            let home = tempfile::tempdir().unwrap();
            super::super::test_git(dir.path(), &["init", "-q"]);
            let repo = Repository::open(dir.path()).unwrap();
            let env = AttrEnv {
                home: Some(home.path().to_path_buf()),
                xdg_config_home: None,
                attr_source: false,
                path: Some(real_git().parent().unwrap().as_os_str().to_owned()),
                cwd: dir.path().to_path_buf(),
            };
            Setup {
                dir,
                home,
                repo,
                env,
            }
        }

        fn write(&self, path: &str, text: &str) {
            let path = self.dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }

        fn git(&self, args: &[&str]) {
            super::super::test_git(self.dir.path(), args);
        }

        /// What the lookup says for `paths`.
        fn mentioned(&self, paths: &[&str]) -> Option<bool> {
            let index = self.repo.index().unwrap();
            let paths: Vec<&[u8]> = paths.iter().map(|p| p.as_bytes()).collect();
            let state = self.dir.path().join(".git/phasegate");
            mentioned(
                &self.repo,
                &index,
                self.dir.path(),
                &paths,
                &self.env,
                &state,
                NAMES,
            )
        }
    }

    #[test]
    fn without_any_attribute_file_naming_it_nothing_needs_asking() {
        let setup = Setup::new();
        setup.write(".gitattributes", "*.txt text eol=lf\n");
        setup.write("sub/.gitattributes", "*.bin binary\n");
        assert_eq!(setup.mentioned(&["a.txt", "sub/b.bin"]), Some(false));
    }

    #[test]
    fn each_source_git_reads_is_read() {
        let line = "*.txt working-tree-encoding=UTF-16LE\n";
        // The root's file in the work tree only.
        let setup = Setup::new();
        setup.write(".gitattributes", line);
        assert_eq!(setup.mentioned(&["a.txt"]), Some(true));

        // A directory's file in the index only; not for paths outside it.
        let setup = Setup::new();
        setup.write("deep/er/.gitattributes", line);
        setup.git(&["add", "deep/er/.gitattributes"]);
        fs::remove_file(setup.dir.path().join("deep/er/.gitattributes")).unwrap();
        assert_eq!(setup.mentioned(&["deep/er/a.txt"]), Some(true));
        assert_eq!(setup.mentioned(&["deep/a.txt", "other/a.txt"]), Some(false));

        // A macro, in the case git does not match: read all the same.
        let setup = Setup::new();
        setup.write(
            ".git/info/attributes",
            "[attr]wide WORKING-TREE-ENCODING=UTF-16\n",
        );
        assert_eq!(setup.mentioned(&["a.txt"]), Some(true));

        // The global file under HOME, under XDG_CONFIG_HOME, and the one
        // `core.attributesFile` names (`~/` is HOME).
        let setup = Setup::new();
        fs::create_dir_all(setup.home.path().join(".config/git")).unwrap();
        fs::write(setup.home.path().join(".config/git/attributes"), line).unwrap();
        assert_eq!(setup.mentioned(&["a.txt"]), Some(true));
        let mut setup = Setup::new();
        let xdg = tempfile::tempdir().unwrap();
        fs::create_dir_all(xdg.path().join("git")).unwrap();
        fs::write(xdg.path().join("git/attributes"), line).unwrap();
        setup.env.xdg_config_home = Some(xdg.path().to_path_buf());
        assert_eq!(setup.mentioned(&["a.txt"]), Some(true));
        let setup = Setup::new();
        fs::write(setup.home.path().join("attrs"), line).unwrap();
        setup.git(&["config", "core.attributesFile", "~/attrs"]);
        assert_eq!(setup.mentioned(&["a.txt"]), Some(true));
        setup.git(&["config", "core.attributesFile", "~/none"]);
        assert_eq!(setup.mentioned(&["a.txt"]), Some(false));
    }

    #[test]
    fn what_cannot_be_known_is_asked_of_git() {
        let mut setup = Setup::new();
        setup.env.attr_source = true;
        assert_eq!(setup.mentioned(&["a.txt"]), None);

        let setup = Setup::new();
        setup.git(&["config", "attr.tree", "HEAD"]);
        assert_eq!(setup.mentioned(&["a.txt"]), None);

        let setup = Setup::new();
        setup.git(&["config", "core.attributesFile", "~nobody/attrs"]);
        assert_eq!(setup.mentioned(&["a.txt"]), None);

        // A file that is there and cannot be read.
        let setup = Setup::new();
        fs::create_dir_all(setup.dir.path().join("sub/.gitattributes")).unwrap();
        assert_eq!(setup.mentioned(&["sub/a.txt"]), None);

        // No git to say where its system file is.
        let mut setup = Setup::new();
        setup.env.path = Some(OsString::new());
        assert_eq!(setup.mentioned(&["a.txt"]), None);
    }

    #[test]
    fn the_system_file_is_where_git_says_and_asked_again_when_git_changes() {
        let setup = Setup::new();
        let bin = tempfile::tempdir().unwrap();
        let git = bin.path().join("git");
        let fake = |answer: &str| {
            fs::write(&git, format!("#!/bin/sh\n{answer}\n")).unwrap();
            let mut perms = fs::metadata(&git).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
            fs::set_permissions(&git, perms).unwrap();
        };
        let env = AttrEnv {
            path: Some(bin.path().as_os_str().to_owned()),
            ..setup.env.clone()
        };
        let state = setup.dir.path().join(".git/phasegate");
        fake("echo /one/gitattributes");
        assert_eq!(
            system_file(&env, &state, crate::state::Sharing::Umask),
            Some(PathBuf::from("/one/gitattributes"))
        );
        // Remembered: the same git is not asked again.
        let cache = state.join("git-system-attributes");
        let known = fs::read(&cache).unwrap();
        assert!(known.ends_with(b"/one/gitattributes"));
        let mut edited = known[..known.len() - b"one/gitattributes".len()].to_vec();
        edited.extend_from_slice(b"two/gitattributes");
        fs::write(&cache, edited).unwrap();
        assert_eq!(
            system_file(&env, &state, crate::state::Sharing::Umask),
            Some(PathBuf::from("/two/gitattributes"))
        );
        // Another git (here, the same file rewritten) is asked.
        fake("echo /three/longer/gitattributes");
        assert_eq!(
            system_file(&env, &state, crate::state::Sharing::Umask),
            Some(PathBuf::from("/three/longer/gitattributes"))
        );
        // A git that cannot say (before 2.42) leaves it unknown.
        fake("echo 'usage: git var' >&2; exit 128");
        assert_eq!(
            system_file(&env, &state, crate::state::Sharing::Umask),
            None
        );
        assert_eq!(
            system_file(&env, &state, crate::state::Sharing::Umask),
            None
        );
    }

    #[test]
    fn the_real_git_names_its_system_file() {
        let setup = Setup::new();
        let state = setup.dir.path().join(".git/phasegate");
        let out = Command::new(real_git())
            .args(["var", "GIT_ATTR_SYSTEM"])
            .output()
            .unwrap();
        let said = String::from_utf8(out.stdout).unwrap();
        let expected = out
            .status
            .success()
            .then(|| PathBuf::from(said.trim_end_matches('\n')));
        assert_eq!(
            system_file(&setup.env, &state, crate::state::Sharing::Umask),
            expected
        );
    }
}
