//! The configuration git takes from the environment, which libgit2 does not
//! read: `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`,
//! and the `-c name=value` of `git -c … commit` (exported to hooks as
//! `GIT_CONFIG_PARAMETERS`, or as `GIT_CONFIG_COUNT` with
//! `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`). Without them, a filter, an
//! `autocrlf` or a `core.hooksPath` set that way would be seen by git and
//! not by phasegate.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use git2::ConfigLevel;

/// What the environment says of git's configuration.
#[derive(Debug, Clone, Default)]
pub struct ConfigEnv {
    /// `GIT_CONFIG_GLOBAL`: the one global file, instead of `~/.gitconfig`
    /// and `$XDG_CONFIG_HOME/git/config`.
    pub global: Option<PathBuf>,
    /// `GIT_CONFIG_SYSTEM`: the system file, instead of `/etc/gitconfig`.
    pub system: Option<PathBuf>,
    /// `GIT_CONFIG_NOSYSTEM`: no system file at all.
    pub no_system: bool,
    /// `GIT_CONFIG_PARAMETERS`, as git quotes it.
    pub parameters: Option<OsString>,
    /// `GIT_CONFIG_KEY_<n>` and `GIT_CONFIG_VALUE_<n>`, in order.
    pub pairs: Vec<(String, String)>,
}

impl ConfigEnv {
    fn is_empty(&self) -> bool {
        self.global.is_none()
            && self.system.is_none()
            && !self.no_system
            && self.parameters.is_none()
            && self.pairs.is_empty()
    }
}

/// The configuration from the environment, and the command line's settings
/// as a file libgit2 can read (an anonymous in-memory file, alive as long
/// as the process).
struct Applied {
    env: ConfigEnv,
    command_line: Option<PathBuf>,
    _file: Option<rustix::fd::OwnedFd>,
}

static ENV: OnceLock<Applied> = OnceLock::new();

/// Makes every repository opened from now on read its configuration as git
/// would with this environment. Settings git would reject are left out.
pub fn use_config_env(env: ConfigEnv) {
    if env.is_empty() {
        return;
    }
    let mut settings = env
        .parameters
        .as_ref()
        .map(|p| parse_parameters(&p.to_string_lossy()))
        .unwrap_or_default();
    settings.extend(env.pairs.iter().map(|(k, v)| (k.clone(), Some(v.clone()))));
    let (command_line, file) = match command_line_file(&settings) {
        Some((path, fd)) => (Some(path), Some(fd)),
        None => (None, None),
    };
    let _ = ENV.set(Applied {
        env,
        command_line,
        _file: file,
    });
}

/// The settings as a config file in memory, named by a path libgit2 can
/// open (`/proc/self/fd/<n>`).
#[cfg(target_os = "linux")]
fn command_line_file(
    settings: &[(String, Option<String>)],
) -> Option<(PathBuf, rustix::fd::OwnedFd)> {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    if settings.is_empty() {
        return None;
    }
    let fd = rustix::fs::memfd_create("phasegate-git-c", rustix::fs::MemfdFlags::CLOEXEC).ok()?;
    let mut file = std::fs::File::from(fd);
    file.write_all(render(settings).as_bytes()).ok()?;
    let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    Some((path, file.into()))
}

/// Elsewhere `git -c` settings are not seen (libgit2 reads files only).
#[cfg(not(target_os = "linux"))]
fn command_line_file(_: &[(String, Option<String>)]) -> Option<(PathBuf, rustix::fd::OwnedFd)> {
    None
}

/// Gives `repo` the configuration files the environment names, in place of
/// the ones libgit2 found by itself.
pub fn apply(repo: &git2::Repository) -> Result<(), git2::Error> {
    let Some(applied) = ENV.get() else {
        return Ok(());
    };
    let mut config = repo.config()?;
    // A level is emptied by a file that does not exist.
    let nothing = repo.path().join("phasegate-no-such-dir").join("config");
    let is_null = |path: &Path| path.as_os_str().is_empty() || path == Path::new("/dev/null");
    let env = &applied.env;
    if let Some(global) = &env.global {
        let global = if is_null(global) { &nothing } else { global };
        config.add_file(global, ConfigLevel::Global, true)?;
        config.add_file(&nothing, ConfigLevel::XDG, true)?;
    }
    if env.no_system {
        config.add_file(&nothing, ConfigLevel::System, true)?;
    } else if let Some(system) = &env.system {
        let system = if is_null(system) { &nothing } else { system };
        config.add_file(system, ConfigLevel::System, true)?;
    }
    if let Some(file) = &applied.command_line {
        config.add_file(file, ConfigLevel::App, true)?;
    }
    Ok(())
}

/// The settings of `GIT_CONFIG_PARAMETERS`: `'name'='value'` entries (or
/// `'name=value'` from older git, or `'name'` alone for true), each quoted
/// as a shell quotes, separated by spaces. Unreadable text ends the list.
fn parse_parameters(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let Some((key, after)) = unquote(rest) else {
            break;
        };
        rest = after;
        let entry = if let Some(after) = rest.strip_prefix('=') {
            let Some((value, after)) = unquote(after) else {
                break;
            };
            rest = after;
            (key, Some(value))
        } else {
            match key.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (key, None),
            }
        };
        out.push(entry);
        rest = rest.trim_start();
    }
    out
}

/// One shell-quoted word at the start of `text` (`'it'\''s'` is `it's`),
/// and what follows it.
fn unquote(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut word = String::new();
    loop {
        let end = rest.find('\'')?;
        word.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        // `'\X'`: a character quoted outside the quotes, then on.
        let mut chars = rest.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some('\\'), Some(c), Some('\'')) => {
                word.push(c);
                rest = &rest[2 + c.len_utf8()..];
            }
            _ => return Some((word, rest)),
        }
    }
}

/// The settings as a git config file.
fn render(settings: &[(String, Option<String>)]) -> String {
    let mut out = String::new();
    for (key, value) in settings {
        // section[.subsection].name: the subsection may hold dots.
        let (Some(first), Some(last)) = (key.find('.'), key.rfind('.')) else {
            continue;
        };
        let (section, name) = (&key[..first], &key[last + 1..]);
        if section.is_empty() || name.is_empty() {
            continue;
        }
        if first == last {
            out.push_str(&format!("[{section}]\n"));
        } else {
            let sub = &key[first + 1..last];
            out.push_str(&format!("[{section} \"{}\"]\n", escape(sub)));
        }
        match value {
            Some(value) => out.push_str(&format!("\t{name} = \"{}\"\n", escape(value))),
            None => out.push_str(&format!("\t{name}\n")),
        }
    }
    out
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_read_in_every_quoting_git_writes() {
        let text = r"'core.autocrlf'='true' 'filter.rot.clean'='tr a-z n-za-m' 'user.name=old style' 'a.b.c.d'='it'\''s' 'bare.flag'";
        assert_eq!(
            parse_parameters(text),
            vec![
                ("core.autocrlf".into(), Some("true".into())),
                ("filter.rot.clean".into(), Some("tr a-z n-za-m".into())),
                ("user.name".into(), Some("old style".into())),
                ("a.b.c.d".into(), Some("it's".into())),
                ("bare.flag".into(), None),
            ]
        );
        // Broken quoting: what came before it stands.
        assert_eq!(
            parse_parameters("'a.b'='1' 'c.d"),
            vec![("a.b".into(), Some("1".into()))]
        );
    }

    #[test]
    fn settings_become_a_config_file_git_reads_back() {
        let settings = vec![
            (
                "filter.rot.clean".to_string(),
                Some("tr \"a\" \\z".to_string()),
            ),
            (
                "url.https://x.y/.insteadOf".to_string(),
                Some("x:".to_string()),
            ),
            ("core.bare".to_string(), None),
            ("nodot".to_string(), Some("ignored".to_string())),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, render(&settings)).unwrap();
        let config = git2::Config::open(&path).unwrap();
        assert_eq!(
            config.get_string("filter.rot.clean").unwrap(),
            "tr \"a\" \\z"
        );
        assert_eq!(
            config.get_string("url.https://x.y/.insteadof").unwrap(),
            "x:"
        );
        assert!(config.get_bool("core.bare").unwrap());
    }
}
