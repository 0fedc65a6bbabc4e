//! A Python project's own virtual environment (`.venv`), put first on a
//! check's `PATH` as activating it would, so a commit made where it is not
//! activated (a GUI git client, an editor) runs the project's `pytest`,
//! as npx runs the project's `node_modules/.bin`. Nothing here installs or
//! syncs anything: the environment is used as it is.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::CheckPlan;

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
/// tools read to find it (pyright, uv). Leaves a check alone whose own
/// `env` sets either: the configuration chose. Whether it did.
pub fn activate(plan: &mut CheckPlan, venv: &Path) -> bool {
    if plan
        .env
        .iter()
        .any(|(key, _)| key == "PATH" || key == "VIRTUAL_ENV")
    {
        return false;
    }
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
    fn its_bin_goes_first_on_path() {
        let path = path_with(Path::new("/p/.venv"), Some(OsStr::new("/usr/bin:/bin")));
        assert_eq!(
            path.as_deref(),
            Some(OsStr::new("/p/.venv/bin:/usr/bin:/bin"))
        );
        assert_eq!(path_with(Path::new("/a:b/.venv"), None), None);
    }
}
