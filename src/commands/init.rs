//! `phasegate init`: write a commented `phasegate.toml` for the detected
//! language; never overwrite one without `--force`.

use crate::cli::InitArgs;
use crate::config;
use crate::context::Context;
use crate::exit::ExitCode;

use super::Streams;

pub fn run(ctx: &Context, args: &InitArgs, io: &mut Streams<'_>) -> ExitCode {
    let root = match super::project_root(ctx, io) {
        Ok(root) => root,
        Err(code) => return code,
    };
    let path = root.join(config::CONFIG_FILE);
    // Whatever stands there counts, a symbolic link too, dangling or not:
    // `exists` follows it, and writing would create its target, wherever
    // it points.
    if let Ok(existing) = std::fs::symlink_metadata(&path) {
        if !args.force {
            let what = if existing.file_type().is_symlink() {
                "a symbolic link"
            } else if existing.is_dir() {
                "a directory"
            } else {
                "a file"
            };
            let _ = writeln!(
                io.err,
                "error: `{}` already exists ({what})\nhelp: run `phasegate init --force` to replace it",
                path.display()
            );
            return ExitCode::Usage;
        }
    }
    let detected = config::detect(&root);
    let text = config::init_template(&detected);
    if let Err(e) = replace(&path, &text) {
        let _ = writeln!(io.err, "error: failed to write `{}`: {e}", path.display());
        return ExitCode::Incomplete;
    }
    // The personal override must never be committed by accident. Outside
    // a repository there is no commit to keep it from, and a `.gitignore`
    // would be one more file nobody asked for (in a home directory, say).
    let in_repo = crate::git::discover(&root).is_ok_and(|repo| repo.is_some());
    let ignoring = in_repo.then(|| ignore_local_file(&root));
    let ignored = match ignoring {
        None => false,
        Some(Ok(added)) => added,
        Some(Err(e)) => {
            let _ = writeln!(
                io.err,
                "warning: failed to add `{}` to .gitignore: {e}",
                config::LOCAL_FILE
            );
            false
        }
    };
    // A rule that ignores the file keeps it out of every commit: the team
    // and CI would go on running the defaults.
    // Outside a repository nothing ignores it.
    if crate::git::ignores(&root, std::path::Path::new(config::CONFIG_FILE)).unwrap_or(false) {
        let _ = writeln!(
            io.err,
            "warning: git ignores `{0}`, so commits leave it out and others run on the defaults\nhelp: add `!/{0}` to .gitignore, or run `git add -f {0}`",
            config::CONFIG_FILE
        );
    }
    let languages = &detected.languages;
    // Projects only below the root: the file's phases check them.
    let nested = config::nested_names(&detected.below);
    // A root language with nothing to run over projects below it: the
    // projects are what the file checks.
    let at_root = languages.first().filter(|_| nested.is_none());
    let language = match (at_root, &nested) {
        (Some(language), _) => language.name().to_string(),
        // Projects below the root: the phases check each in its directory.
        (None, Some(projects)) => {
            format!("no project at the root; checks for {projects}, each run in its directory when its files change")
        }
        (None, None) => "no known language".to_string(),
    };
    if let Some(offered) = at_root.and_then(config::Language::offered_commands) {
        // A Node project with no script to run: the file lists no check,
        // and a run would pass having run nothing.
        let names: Vec<String> = offered
            .iter()
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        let _ = writeln!(
            io.out,
            "wrote {} ({language})\nno check runs yet: package.json has no `test`, `lint` or `build` script to run (the `test` script `npm init` writes fails on purpose) and there is no tsconfig.json; add the scripts, then uncomment the {} commands and checks {} offers, and run `phasegate run` to try them",
            path.display(),
            names.join(", "),
            config::CONFIG_FILE
        );
    } else if languages.is_empty() && nested.is_none() {
        // The file lists no check: a run would pass having run nothing.
        let _ = writeln!(
            io.out,
            "wrote {} ({language})\nno check runs yet: write the project's commands under [commands] in {1}, uncomment their checks in its phases, then run `phasegate run` to try them",
            path.display(),
            config::CONFIG_FILE
        );
    } else {
        let _ = writeln!(
            io.out,
            "wrote {} ({language}); run `phasegate run` to try it",
            path.display()
        );
    }
    // A tool the file's checks run that is not installed stops every run
    // as incomplete: better said now than at the first commit.
    // The project's own Python environment, which its checks run in: said,
    // so nobody activates it for the hook's sake, or wonders which `pytest`
    // runs.
    if ctx.virtual_env.is_none() {
        for venv in config::project_venvs(&detected, &root) {
            let _ = writeln!(
                io.out,
                "the checks run in the project's Python virtual environment `{0}` (`{0}/bin` first on PATH), activated or not",
                venv.display()
            );
        }
    }
    // Checks that run no tests: said, with how to run them.
    if let Some(untested) = at_root.and_then(config::Language::untested) {
        let _ = writeln!(
            io.out,
            "no check runs the tests: package.json has no `test` script; {}: `tests = \"{}\"` is offered, commented, in {}",
            untested.how,
            untested.command,
            config::CONFIG_FILE
        );
    }
    // A poetry or pipenv project: its environment is outside the project,
    // found by the tool the checks run through.
    for (dir, runner) in config::python_runners(&detected) {
        let program = runner.program();
        let whose = dir.map_or_else(String::new, |dir| format!(" of `{dir}/`"));
        let _ = writeln!(
            io.out,
            "the checks{whose} run their tools through {program} (`{program} run`), in the environment {program} keeps for the project, activated or not"
        );
    }
    let venv_active = ctx.virtual_env.is_some();
    for missing in config::missing_programs(&detected, &root, ctx.path.as_deref(), venv_active) {
        let checks: Vec<String> = missing.checks.iter().map(|c| format!("`{c}`")).collect();
        let (checks, them) = if checks.len() == 1 {
            (format!("check {} runs it", checks[0]), "that check")
        } else {
            (
                format!("checks {} run it", checks.join(", ")),
                "those checks",
            )
        };
        let active = ctx.virtual_env.as_deref().map(std::path::Path::new);
        let (where_looked, install) = match &missing.dependency {
            // A tool of the project's dependencies: installing them (or
            // adding its package) is the fix, not a global install.
            Some((manager, package)) => (
                "not in node_modules/.bin",
                format!(
                    "install the project's dependencies (`{manager} install`), or add `{package}` to them (`{}`)",
                    add_dev_dependency(manager, package)
                ),
            ),
            None => match (&missing.venv, config::python_tool(&missing.program)) {
                (Some(venv), true) => (
                    &*format!("not in `{}/bin`, nor elsewhere on PATH", venv.display()),
                    config::install_in_venv(&root, venv, &missing.program),
                ),
                // A tool of its own (poetry), not one of the project's.
                (Some(venv), false) => (
                    &*format!("not in `{}/bin`, nor elsewhere on PATH", venv.display()),
                    config::install_hint(&missing.program),
                ),
                // An activated environment is the one the checks run in.
                (None, true) if active.is_some() => (
                    "not found on PATH",
                    format!(
                        "install it in the activated environment the checks run in (`{}/bin/pip install {}`), or deactivate it for the checks to run in the project's own `.venv`",
                        active.map_or_else(String::new, |a| a.display().to_string()),
                        missing.program
                    ),
                ),
                (None, true) => (
                    "not found on PATH",
                    format!(
                        "install it in a virtual environment of the project's, which its checks run in without activating it (`python3 -m venv .venv`, then `.venv/bin/pip install {0}`; with uv, `uv add --dev {0}`)",
                        missing.program
                    ),
                ),
                (None, false) => (
                    "not found on PATH",
                    config::install_hint(&missing.program),
                ),
            },
        };
        let _ = writeln!(
            io.err,
            "warning: `{}` is not installed ({where_looked}), and {checks}: until it is, every run stops there as incomplete (exit 3)\nhelp: {install}, or add `on_missing = \"warn\"` (or \"skip\") to {them} in {}",
            missing.program,
            config::CONFIG_FILE
        );
    }
    // A monorepo with a project at the root: the code of the other
    // languages is not checked until a phase lists its checks, which the
    // file offers as comments.
    if let Some(unchecked) =
        config::unchecked_names(languages).map(|others| format!("the {others} code here is"))
    {
        let _ = writeln!(
            io.out,
            "{unchecked} not checked yet: add the checks {} offers as comments to a phase",
            config::CONFIG_FILE
        );
    }
    if ignored {
        let _ = writeln!(
            io.out,
            "added `/{}` to .gitignore: your personal overrides stay out of commits",
            config::LOCAL_FILE
        );
    } else if !in_repo {
        let _ = writeln!(
            io.out,
            "not in a git repository: once this is one, add `/{}` to its .gitignore so your personal overrides stay out of commits",
            config::LOCAL_FILE
        );
    }
    ExitCode::Proceed
}

/// The command that adds `package` to the project's development
/// dependencies with `manager`.
fn add_dev_dependency(manager: &str, package: &str) -> String {
    match manager {
        "npm" => format!("npm install --save-dev {package}"),
        "bun" => format!("bun add --dev {package}"),
        other => format!("{other} add -D {package}"),
    }
}

/// Puts a new file with `text` at `path`, in place of whatever entry is there:
/// written beside it and renamed over it, so a symbolic link is replaced
/// itself, never written through.
fn replace(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let temporary = path.with_file_name(format!(
        ".{}.{}.tmp",
        config::CONFIG_FILE,
        std::process::id()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .and_then(|mut file| file.write_all(text.as_bytes()));
    let renamed = written.and_then(|()| std::fs::rename(&temporary, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    renamed
}

/// Adds `phasegate.local.toml` to the root `.gitignore` unless a line
/// already names it; whether it added it.
fn ignore_local_file(root: &std::path::Path) -> std::io::Result<bool> {
    let path = root.join(".gitignore");
    // git does not follow a `.gitignore` that is a symbolic link, and
    // writing through one would change a file somewhere else.
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::other(format!(
            "it is a symbolic link, which git does not read; add `/{}` to the ignore rules you use",
            config::LOCAL_FILE
        )));
    }
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let name = config::LOCAL_FILE;
    if current
        .lines()
        .any(|l| l.trim().trim_start_matches('/') == name)
    {
        return Ok(false);
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("/{name}\n"));
    std::fs::write(path, text).map(|()| true)
}
