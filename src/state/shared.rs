//! Who may read and write what phasegate creates under `.git/phasegate/`:
//! what the repository's `core.sharedRepository` says of git's own files.
//!
//! A team that shares one repository on one machine (`git init
//! --shared=group`) counts on git making its files group-writable whatever
//! each member's umask. phasegate's state is shared the same way (the
//! state lock, `state.json`, `runs/`, the intervention queue): made with
//! the usual umask 022 alone, the next member's commit could take no lock
//! and write no run. So every file and directory phasegate creates there
//! gets the mode git's `adjust_shared_perm` would give it.

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// What `core.sharedRepository` asks of new files (git's
/// `git_config_perm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sharing {
    /// `umask`, `false`, `0` or unset: the umask decides.
    #[default]
    Umask,
    /// `group` (or `true`, `1`) adds `0660`; `all`, `world`, `everybody`
    /// (or `2`) add `0664`: to what the umask left.
    Add(u32),
    /// An octal mode (`0640`): the mode of every file, whatever the umask.
    Exact(u32),
}

const GROUP: u32 = 0o660;
const EVERYBODY: u32 = 0o664;

/// The most a file or directory that may hold a user's unstaged work
/// gets: the group's, where the repository is shared, and nothing for
/// others, whatever the sharing (`all` included).
pub const GROUP_ONLY: u32 = 0o2770;

impl Sharing {
    /// Reads a value of `core.sharedRepository` as git does; `None` is the
    /// key without a value (`true`). A mode that leaves the owner unable
    /// to read and write makes git itself refuse to run: it counts as
    /// unset here.
    pub fn parse(value: Option<&str>) -> Sharing {
        let Some(value) = value else {
            return Sharing::Add(GROUP);
        };
        match value.to_ascii_lowercase().as_str() {
            // git's names, then the booleans it also takes.
            "umask" | "false" | "no" | "off" | "" => return Sharing::Umask,
            "group" | "true" | "yes" | "on" => return Sharing::Add(GROUP),
            "all" | "world" | "everybody" => return Sharing::Add(EVERYBODY),
            _ => {}
        }
        match u32::from_str_radix(value, 8) {
            Ok(0) => Sharing::Umask,
            Ok(1) => Sharing::Add(GROUP),
            Ok(2) => Sharing::Add(EVERYBODY),
            // Nobody else may write: git masks the write bits of others.
            Ok(mode) if mode & 0o600 == 0o600 && mode <= 0o777 => Sharing::Exact(mode & 0o666),
            _ => Sharing::Umask,
        }
    }

    /// The mode git gives a file or directory created with `mode`
    /// (`calc_shared_perm`, then `adjust_shared_perm`'s rule for
    /// directories: searchable where readable, and setgid once the group
    /// may use it, so what is made inside stays the group's).
    pub fn mode(self, mode: u32, dir: bool) -> u32 {
        let (mut tweak, exact) = match self {
            Sharing::Umask => return mode,
            Sharing::Add(bits) => (bits, false),
            Sharing::Exact(bits) => (bits, true),
        };
        if mode & 0o200 == 0 {
            tweak &= !0o222;
        }
        if mode & 0o100 != 0 {
            tweak |= (tweak & 0o444) >> 2;
        }
        let mut new = if exact {
            (mode & !0o777) | tweak
        } else {
            mode | tweak
        };
        if dir {
            new |= (new & 0o444) >> 2;
            if new & 0o060 != 0 {
                new |= 0o2000;
            }
        }
        new
    }
}

impl Sharing {
    /// What `core.sharedRepository` says in `config`, a repository's
    /// configuration as git reads it (its own file over the user's and
    /// the system's, and what the environment sets): read once, where
    /// the repository is opened, and carried with its other facts
    /// (`git::RepoInfo`).
    pub fn of_config(config: &git2::Config) -> Sharing {
        config
            .get_entry("core.sharedRepository")
            .map_or(Sharing::Umask, |entry| {
                if entry.has_value() {
                    entry
                        .value()
                        .map_or(Sharing::Umask, |v| Sharing::parse(Some(v)))
                } else {
                    Sharing::parse(None)
                }
            })
    }

    /// Gives the open file or directory `file` the mode this sharing asks
    /// for. One another user owns is left as it is: only its owner may
    /// change its mode (and one an earlier phasegate made with the umask
    /// alone is set right by its owner's next run).
    pub fn share_file(self, file: &fs::File) -> io::Result<()> {
        self.share_file_within(file, 0o7777)
    }

    /// `share_file`, keeping the mode within `allowed`: what only the
    /// group may see (saved unstaged changes) gets no bit for others,
    /// whatever the sharing.
    pub fn share_file_within(self, file: &fs::File, allowed: u32) -> io::Result<()> {
        if self == Sharing::Umask {
            return Ok(());
        }
        let meta = file.metadata()?;
        let old = meta.mode() & 0o7777;
        let new = self.mode(old, meta.is_dir()) & allowed;
        if new == old || meta.uid() != rustix::process::geteuid().as_raw() {
            return Ok(());
        }
        file.set_permissions(fs::Permissions::from_mode(new))
    }

    /// `share_file` for the directory at `path` (never through a link).
    pub fn share_dir(self, path: &Path) -> io::Result<()> {
        self.share_dir_within(path, 0o7777)
    }

    /// `share_file_within` for the directory at `path` (never through a
    /// link).
    pub fn share_dir_within(self, path: &Path, allowed: u32) -> io::Result<()> {
        if self == Sharing::Umask || !fs::symlink_metadata(path)?.is_dir() {
            return Ok(());
        }
        self.share_file_within(&fs::File::open(path)?, allowed)
    }

    /// `fs::create_dir_all`, each directory shared as this sharing asks
    /// (`share_file`), the last one too when it was there already.
    pub fn create_dirs(self, path: &Path) -> io::Result<()> {
        self.create_dirs_as(path, 0o777, 0o7777)
    }

    /// `create_dirs` for what may hold a user's unstaged work (saved
    /// copies, the versions a restore kept): made for the owner alone
    /// (`0700`, whatever the umask), then opened to the group a shared
    /// repository names, never to others (`GROUP_ONLY`).
    pub fn create_private_dirs(self, path: &Path) -> io::Result<()> {
        self.create_dirs_as(path, 0o700, GROUP_ONLY)
    }

    /// `fs::create_dir_all` with `mode` (before the umask), each
    /// directory it makes, and the last one, shared within `allowed`.
    fn create_dirs_as(self, path: &Path, mode: u32, allowed: u32) -> io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        let mut builder = fs::DirBuilder::new();
        builder.mode(mode);
        if self == Sharing::Umask {
            return builder.recursive(true).create(path);
        }
        // The missing ancestors, from the top down.
        let missing: Vec<&Path> = path
            .ancestors()
            .take_while(|dir| !dir.as_os_str().is_empty() && fs::symlink_metadata(dir).is_err())
            .collect();
        for dir in missing.iter().rev() {
            match builder.create(dir) {
                Ok(()) => self.share_dir_within(dir, allowed)?,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        if missing.is_empty() {
            self.share_dir_within(path, allowed)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_shared_repository_reads_as_git_reads_it() {
        for (value, sharing) in [
            (None, Sharing::Add(0o660)),
            (Some("group"), Sharing::Add(0o660)),
            (Some("true"), Sharing::Add(0o660)),
            (Some("1"), Sharing::Add(0o660)),
            (Some("all"), Sharing::Add(0o664)),
            (Some("world"), Sharing::Add(0o664)),
            (Some("everybody"), Sharing::Add(0o664)),
            (Some("2"), Sharing::Add(0o664)),
            (Some("umask"), Sharing::Umask),
            (Some("false"), Sharing::Umask),
            (Some("0"), Sharing::Umask),
            (Some("0640"), Sharing::Exact(0o640)),
            (Some("0666"), Sharing::Exact(0o666)),
            // Others never write: git masks their write bit.
            (Some("0777"), Sharing::Exact(0o666)),
            // The owner must read and write, or git refuses to run.
            (Some("0440"), Sharing::Umask),
        ] {
            assert_eq!(Sharing::parse(value), sharing, "{value:?}");
        }
    }

    #[test]
    fn modes_follow_adjust_shared_perm() {
        let group = Sharing::Add(0o660);
        assert_eq!(group.mode(0o600, false), 0o660);
        assert_eq!(group.mode(0o644, false), 0o664);
        assert_eq!(group.mode(0o700, true), 0o2770);
        assert_eq!(group.mode(0o755, true), 0o2775);
        // Read-only stays read-only; executable gets x where r is given.
        assert_eq!(group.mode(0o400, false), 0o440);
        assert_eq!(group.mode(0o700, false), 0o770);
        let all = Sharing::Add(0o664);
        assert_eq!(all.mode(0o600, false), 0o664);
        assert_eq!(all.mode(0o700, true), 0o2775);
        // An exact mode replaces what the umask left.
        let exact = Sharing::Exact(0o640);
        assert_eq!(exact.mode(0o666, false), 0o640);
        assert_eq!(exact.mode(0o700, true), 0o2750);
        assert_eq!(Sharing::Exact(0o600).mode(0o755, true), 0o700);
        assert_eq!(Sharing::Umask.mode(0o600, false), 0o600);
    }
}
