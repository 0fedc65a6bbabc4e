//! A Python project's own virtual environment (`.venv`), put first on a
//! check's `PATH` as activating it would, so a commit made where it is not
//! activated (a GUI git client, an editor) runs the project's `pytest`,
//! as npx runs the project's `node_modules/.bin`. Nothing here installs or
//! syncs anything: the environment is used as it is.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::CheckPlan;

/// Why phasegate left a check's environment as it is rather than run it
/// in the project's virtual environment. Known without looking for one:
/// the environment is looked into only once a program is found missing
/// (`unused_holding`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftAlone {
    /// An environment is activated: `VIRTUAL_ENV`, which names it.
    Activated(PathBuf),
    /// The check's own `env` sets this variable (`PATH` or `VIRTUAL_ENV`).
    CheckEnv(&'static str),
}

/// Why the project's virtual environment, which has a program the check
/// could not find, was not the check's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bypass {
    /// Another environment is activated: `VIRTUAL_ENV`'s value.
    OtherActive(PathBuf),
    /// `VIRTUAL_ENV` names the project's own, but its `bin` is not on the
    /// `PATH` phasegate was given (activated, then `PATH` set again).
    ActiveOffPath,
    /// The check's own `env` sets this variable (`PATH` or `VIRTUAL_ENV`).
    CheckEnv(&'static str),
}

/// The project's virtual environment that has a program not found on the
/// check's `PATH`, and why the check did not run in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusedVenv {
    /// The environment, relative to the root of the tree the checks run
    /// in (`.venv`, `api/venv`).
    pub venv: PathBuf,
    pub why: Bypass,
}

/// Runs the check in the project's virtual environment, unless an
/// activated one (`active`, phasegate's `VIRTUAL_ENV`) or the check's own
/// `env` chose otherwise: then the plan records why (`left_venv`), at the
/// cost of nothing, for a missing program to be explained. The
/// environment it runs in, if it was put in one.
pub fn enter(plan: &mut CheckPlan, active: Option<&OsStr>) -> Option<PathBuf> {
    // The configuration chose: it wins over an activated environment too,
    // which would not be used either without it.
    let own = ["PATH", "VIRTUAL_ENV"]
        .into_iter()
        .find(|name| plan.env.iter().any(|(key, _)| key == name));
    if let Some(name) = own {
        plan.left_venv = Some(LeftAlone::CheckEnv(name));
        return None;
    }
    // An activated environment is the user's choice.
    if let Some(active) = active {
        plan.left_venv = Some(LeftAlone::Activated(PathBuf::from(active)));
        return None;
    }
    let venv = project_venv(&plan.cwd, &plan.root)?;
    activate(plan, &venv).then_some(venv)
}

/// The project's virtual environment, when it has `program` and the
/// check did not run in it (`CheckPlan::left_venv`). Asked only of a
/// program found missing: a run whose tools are found never looks.
pub fn unused_holding(plan: &CheckPlan, program: &str) -> Option<UnusedVenv> {
    let left = plan.left_venv.as_ref()?;
    // A path (`./run-tests`, `/usr/bin/x`) is not looked up on `PATH`.
    if program.is_empty() || program.contains('/') {
        return None;
    }
    let venv = project_venv(&plan.cwd, &plan.root)?;
    if !is_executable(&venv.join("bin").join(program)) {
        return None;
    }
    let why = match left {
        LeftAlone::CheckEnv(name) => Bypass::CheckEnv(name),
        LeftAlone::Activated(active) if same_directory(active, &venv) => Bypass::ActiveOffPath,
        LeftAlone::Activated(active) => Bypass::OtherActive(active.clone()),
    };
    let shown = venv.strip_prefix(&plan.root).unwrap_or(&venv).to_path_buf();
    Some(UnusedVenv { venv: shown, why })
}

/// Whether `path` is a file someone may run, as a shell would find it.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `a` and `b` name one directory (through links, or written
/// differently: `VIRTUAL_ENV` holds whatever path activated it).
fn same_directory(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

/// The directory names of a project's virtual environment, in the order
/// they are looked for: `.venv` is what `uv`, poetry (in-project) and
/// most editors make, `venv` what `python -m venv venv` tutorials do.
const NAMES: [&str; 2] = [".venv", "venv"];

/// The virtual environment of the project a check runs in at `cwd`: the
/// nearest `.venv` (else `venv`) that holds a `pyvenv.cfg`, from `cwd` up
/// to `root` (a uv workspace keeps one at its root for its members).
/// A few `stat`s: it is asked of every check of every run.
pub fn project_venv(cwd: &Path, root: &Path) -> Option<PathBuf> {
    let mut dir = cwd;
    loop {
        for name in NAMES {
            let venv = dir.join(name);
            // `pyvenv.cfg` is what makes a directory a virtual environment
            // (PEP 405); a `venv/` of anything else is not one.
            if venv.join("pyvenv.cfg").is_file() && venv.join("bin").is_dir() {
                return Some(venv);
            }
        }
        if dir == root {
            return None;
        }
        dir = dir.parent().filter(|parent| parent.starts_with(root))?;
    }
}

/// `path` with `venv`'s `bin` first, as `source bin/activate` makes it;
/// `None` when it cannot be written as one `PATH` (a directory whose name
/// holds `:`).
pub fn path_with(venv: &Path, path: Option<&OsStr>) -> Option<OsString> {
    let rest = path.map(std::env::split_paths).into_iter().flatten();
    std::env::join_paths(std::iter::once(venv.join("bin")).chain(rest)).ok()
}

/// Runs the check in the virtual environment `venv`, as if activated:
/// its `bin` first on the check's `PATH`, and `VIRTUAL_ENV` set, which
/// tools read to find it (pyright, uv). Whether it could (`enter` has
/// left alone a check whose own `env` sets either).
fn activate(plan: &mut CheckPlan, venv: &Path) -> bool {
    let Some(path) = path_with(venv, plan.path.as_deref()) else {
        return false;
    };
    // First, so nothing set after it is overridden.
    plan.env.splice(
        0..0,
        [
            ("PATH".to_string(), path.clone()),
            ("VIRTUAL_ENV".to_string(), venv.as_os_str().to_os_string()),
        ],
    );
    plan.path = Some(path);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn venv(at: &Path) {
        std::fs::create_dir_all(at.join("bin")).unwrap();
        std::fs::write(at.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    }

    #[test]
    fn the_nearest_virtual_environment_up_to_the_root_is_the_projects() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("api/src")).unwrap();
        assert_eq!(project_venv(&root.join("api/src"), root), None);
        // A `venv` that is no virtual environment is not one.
        std::fs::create_dir_all(root.join("api/venv/bin")).unwrap();
        assert_eq!(project_venv(&root.join("api"), root), None);
        venv(&root.join(".venv"));
        assert_eq!(
            project_venv(&root.join("api/src"), root),
            Some(root.join(".venv"))
        );
        venv(&root.join("api/venv"));
        assert_eq!(
            project_venv(&root.join("api"), root),
            Some(root.join("api/venv"))
        );
        // `.venv` before `venv` in one directory.
        venv(&root.join("api/.venv"));
        assert_eq!(
            project_venv(&root.join("api"), root),
            Some(root.join("api/.venv"))
        );
        // Nothing above the root is looked at.
        assert_eq!(
            project_venv(&root.join("api/src"), &root.join("api/src")),
            None
        );
    }

    #[test]
    fn a_check_left_out_of_the_projects_environment_says_why_once_a_program_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        venv(&root.join(".venv"));
        let tool = root.join(".venv/bin/pytest");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let plan =
            || crate::runner::spawn::tests::plan(root, "c", "", std::time::Duration::from_secs(1));

        // Entered: nothing to explain.
        let mut entered = plan();
        assert_eq!(enter(&mut entered, None), Some(root.join(".venv")));
        assert_eq!(entered.left_venv, None);
        assert_eq!(unused_holding(&entered, "pytest"), None);

        // Another environment active: the plan is left as it was.
        let mut other = plan();
        let before = other.env.clone();
        assert_eq!(enter(&mut other, Some(OsStr::new("/elsewhere/env"))), None);
        assert_eq!(other.env, before);
        let unused = unused_holding(&other, "pytest").unwrap();
        assert_eq!(unused.venv, Path::new(".venv"));
        assert_eq!(unused.why, Bypass::OtherActive("/elsewhere/env".into()));
        // A program the environment lacks, or a path, is not its.
        assert_eq!(unused_holding(&other, "ruff"), None);
        assert_eq!(unused_holding(&other, "./pytest"), None);

        // The project's own named active, written another way.
        let mut own = plan();
        let written = root.join("x/../.venv");
        std::fs::create_dir(root.join("x")).unwrap();
        enter(&mut own, Some(written.as_os_str()));
        assert_eq!(
            unused_holding(&own, "pytest").unwrap().why,
            Bypass::ActiveOffPath
        );

        // The check's own `env` wins over an active environment.
        let mut configured = plan();
        configured.env.push(("VIRTUAL_ENV".into(), "/x".into()));
        assert_eq!(
            enter(&mut configured, Some(OsStr::new("/elsewhere/env"))),
            None
        );
        assert_eq!(
            unused_holding(&configured, "pytest").unwrap().why,
            Bypass::CheckEnv("VIRTUAL_ENV")
        );
    }

    #[test]
    fn its_bin_goes_first_on_path() {
        let path = path_with(Path::new("/p/.venv"), Some(OsStr::new("/usr/bin:/bin")));
        assert_eq!(
            path.as_deref(),
            Some(OsStr::new("/p/.venv/bin:/usr/bin:/bin"))
        );
        assert_eq!(path_with(Path::new("/a:b/.venv"), None), None);
    }
}
