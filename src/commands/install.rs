//! `phasegate install` and `phasegate uninstall`.

use crate::cli::{InstallArgs, UninstallArgs};
use crate::context::Context;
use crate::exit::ExitCode;
use crate::git::{
    self, HookKind, HuskyRewrite, InstallOptions, InstallOutcome, UninstallOutcome, WorktreeHooks,
};

use super::Streams;

/// The hooks `--hook` names, each once (`--hook pre-push --hook pre-push`
/// asks for one), in the order given; `default` when it names none.
fn kinds(names: &[String], default: &[HookKind]) -> Vec<HookKind> {
    if names.is_empty() {
        return default.to_vec();
    }
    let mut wanted: Vec<HookKind> = Vec::new();
    for kind in names.iter().filter_map(|n| HookKind::parse(n)) {
        if !wanted.contains(&kind) {
            wanted.push(kind);
        }
    }
    wanted
}

/// The line that runs phasegate's gate for `kind` from a hook of one's own
/// (husky's `.husky/pre-commit`): what the installed hook runs.
fn hook_line(kind: HookKind) -> String {
    match kind {
        // It needs git's arguments: the remote's name and address.
        HookKind::PrePush => "phasegate hook pre-push \"$@\"".to_string(),
        HookKind::PreCommit | HookKind::PreMergeCommit => format!("phasegate hook {}", kind.name()),
    }
}

/// Says that `file` was given the rules that keep the line ends of the
/// hooks `kinds` LF, and why it is to be committed with them: once per
/// file, whichever hooks it keeps.
fn line_ends_note(io: &mut Streams<'_>, file: &std::path::Path, kinds: &[HookKind]) {
    let _ = if let [_] = kinds {
        writeln!(
            io.err,
            "note: added a rule to {} that keeps the hook's line ends LF: commit it with the hook, or a clone with `core.autocrlf=true` (Git for Windows) checks the hook out with CRLF line ends and git can not run it (`cannot exec`), so no commit can be made there",
            file.display()
        )
    } else {
        let names: Vec<&str> = kinds.iter().map(|kind| kind.name()).collect();
        writeln!(
            io.err,
            "note: added rules to {} that keep the line ends of the hooks ({}) LF: commit it with the hooks, or a clone with `core.autocrlf=true` (Git for Windows) checks the hooks out with CRLF line ends and git can not run them (`cannot exec`), so no commit can be made there",
            file.display(),
            names.join(", ")
        )
    };
}

/// Adds the hook `kind` to the notes of the `.gitattributes` `file` was
/// given a rule in.
fn add_line_ends(
    notes: &mut Vec<(std::path::PathBuf, Vec<HookKind>)>,
    file: Option<std::path::PathBuf>,
    kind: HookKind,
) {
    let Some(file) = file else {
        return;
    };
    match notes.iter_mut().find(|(noted, _)| *noted == file) {
        Some((_, kinds)) => kinds.push(kind),
        None => notes.push((file, vec![kind])),
    }
}

/// Says which other work trees are not gated, and why: the hooks each of
/// them runs.
fn ungated_note(io: &mut Streams<'_>, ungated: &git::UngatedWorktrees) {
    let relative = ungated.value.display();
    let plain = !ungated.own
        && ungated
            .worktrees
            .iter()
            .all(|worktree| worktree.source == WorktreeHooks::OwnRoot);
    if plain {
        let list: Vec<String> = ungated
            .worktrees
            .iter()
            .map(|worktree| format!("`{}`", worktree.root.display()))
            .collect();
        let _ = writeln!(
            io.err,
            "note: core.hooksPath (`{relative}`) is relative, so each work tree runs the hooks under its own root: {} {} not gated; run `phasegate install` there too",
            list.join(", "),
            if list.len() == 1 { "is" } else { "are" }
        );
        return;
    }
    let header = if ungated.value.is_absolute() {
        format!("core.hooksPath (`{relative}`) is set for this work tree alone (`git config --worktree`), so only the work trees it is set for run the hook installed there, and the other work trees run other hooks")
    } else if ungated.own {
        format!("core.hooksPath (`{relative}`) is set for this work tree alone (`git config --worktree`), relative to its root, so the other work trees run other hooks")
    } else {
        format!("core.hooksPath (`{relative}`) is relative, so each work tree runs the hooks under its own root, unless it has a core.hooksPath of its own")
    };
    let list: Vec<String> = ungated
        .worktrees
        .iter()
        .map(|worktree| {
            let (root, hooks) = (worktree.root.display(), worktree.hooks.display());
            match worktree.source {
                WorktreeHooks::OwnRoot => {
                    format!("`{root}` runs those under its own root, in `{hooks}`")
                }
                WorktreeHooks::Shared => format!(
                    "`{root}` runs the repository's shared hooks in `{hooks}`, as no core.hooksPath is set for it"
                ),
                WorktreeHooks::Elsewhere => format!(
                    "`{root}` runs those in `{hooks}`, which its own core.hooksPath names"
                ),
            }
        })
        .collect();
    let _ = writeln!(
        io.err,
        "note: {header}: {}; {}; run `phasegate install` there too",
        list.join("; "),
        if list.len() == 1 {
            "it is not gated"
        } else {
            "none of them is gated"
        }
    );
}

/// Says how husky will take phasegate's hook `kind` away, and the line
/// that keeps the gate in husky's own hook.
fn husky_note(ctx: &Context, io: &mut Streams<'_>, kind: HookKind) {
    let Some(rewrite) = git::husky_rewrite(&ctx.cwd, kind) else {
        return;
    };
    let (how, project_hook) = match &rewrite {
        HuskyRewrite::Stubs { project_hook } => (
            "husky writes its hooks directory `core.hooksPath` names again at every `npm install` (the `prepare` script), which replaces phasegate's hook without a word",
            project_hook,
        ),
        HuskyRewrite::HooksPath { project_hook } => (
            "package.json runs husky at `npm install` (the `prepare` script), which points `core.hooksPath` at `.husky/_`, and git then no longer runs the hook phasegate installed",
            project_hook,
        ),
    };
    let _ = writeln!(
        io.err,
        "warning: {how}, and {} then go through ungated. To keep the gate, add the line `{}` to {} (husky runs it) and commit it.",
        if kind == HookKind::PrePush { "pushes" } else { "commits" },
        hook_line(kind),
        project_hook.display()
    );
}

/// Says that the hook `kind` at `path` is a link to phasegate's hook
/// elsewhere, which gates this repository only while it is there, and how
/// to give it a hook of its own.
fn linked_elsewhere_warning(
    io: &mut Streams<'_>,
    kind: HookKind,
    path: &std::path::Path,
    elsewhere: &git::LinkedElsewhere,
) {
    let whose = match &elsewhere.repository {
        Some(root) => format!("of the repository at {}", root.display()),
        None => "outside this repository".to_string(),
    };
    let _ = writeln!(
        io.err,
        "warning: the {} hook {} is a symbolic link to {}, phasegate's hook {whose}: it gates this repository only while that file is there. `phasegate uninstall` there, or deleting it, ungates this repository without a word, as git runs no hook through a link that names nothing. To give this repository a hook of its own, run the same `phasegate install` again with `--force` (the link is kept beside it, where it does not run, and `phasegate uninstall` puts it back)",
        kind.name(),
        path.display(),
        elsewhere.target.display()
    );
}

pub fn install(ctx: &Context, args: &InstallArgs, io: &mut Streams<'_>) -> ExitCode {
    if let Some(scope) = git::shared_hooks_scope(&ctx.cwd) {
        let _ = writeln!(
            io.err,
            "note: core.hooksPath is set in your {scope} git configuration: the hooks installed there run in every repository that uses it"
        );
    }
    let mut wanted = kinds(
        &args.hooks,
        &[HookKind::PreCommit, HookKind::PreMergeCommit],
    );
    // pre-commit first, whatever the order asked: a `pre-merge-commit ->
    // pre-commit` link then finds phasegate's pre-commit hook there.
    wanted.sort();
    let options = InstallOptions {
        force: args.force,
        fail_closed: args.fail_closed,
        installed: ctx.exe.clone(),
        pre_commit_too: wanted.contains(&HookKind::PreCommit),
    };
    // Every hook is checked before the first is written: a refusal leaves
    // the hooks as they were, never some of them installed.
    if wanted.len() > 1 {
        for &kind in &wanted {
            if let Err(e) = git::install_check(&ctx.cwd, kind, &options) {
                let _ = writeln!(io.err, "error: {}", super::internal_error(&e).message);
                let _ = writeln!(io.err, "note: no hook was installed or changed");
                return ExitCode::Usage;
            }
        }
    }
    // The hooks written so far: an error on a later one says they stay.
    let mut written: Vec<HookKind> = Vec::new();
    // The test-only pause (`PHASEGATE_TEST_PAUSE_AT`): a SIGINT ends it.
    let pause = |step: &str| {
        if ctx.pause_at.is_some() {
            let _interrupts = crate::runner::InterruptGuard::install();
            ctx.maybe_pause(step, &super::state::state_dir_for(ctx));
        }
    };
    // The `.gitattributes` files given a rule, and for which hooks: said
    // once each, after the hooks.
    let mut line_ends = Vec::new();
    for &kind in &wanted {
        match git::install(&ctx.cwd, kind, &options, &pause) {
            Ok(InstallOutcome::Installed {
                path,
                chained,
                notes,
            }) => {
                written.push(kind);
                let _ = writeln!(
                    io.out,
                    "installed the {} hook: {}",
                    kind.name(),
                    path.display()
                );
                match (&chained, &notes.dangling) {
                    (Some(chained), _) if notes.linked_hook.is_some() => {
                        let _ = writeln!(
                            io.out,
                            "  the hook that was there, a link of your own to phasegate's {} hook, is kept as {}, where it does not run (phasegate's {} hook runs no phasegate hook it keeps); `phasegate uninstall` puts the link back",
                            notes.linked_hook.as_deref().unwrap_or_default(),
                            chained.display(),
                            kind.name()
                        );
                    }
                    (Some(chained), Some(target)) => {
                        let _ = writeln!(
                            io.out,
                            "  the hook that was there is a link to {}, which does not exist, so git did not run it: the link is kept as {} and runs first once that file is there (`phasegate uninstall` puts the link back)",
                            target.display(),
                            chained.display()
                        );
                    }
                    (Some(chained), None) => {
                        let _ = writeln!(
                            io.out,
                            "  the hook that was there is kept as {} and still runs first",
                            chained.display()
                        );
                    }
                    (None, _) => {}
                }
                if let Some(backup) = notes.backed_up {
                    let _ = writeln!(
                        io.out,
                        "  the hook kept by an earlier install was moved to {}: it no longer runs (uninstall leaves it there)",
                        backup.display()
                    );
                }
                add_line_ends(&mut line_ends, notes.line_ends, kind);
                if let Some(revived) = notes.revived {
                    let _ = writeln!(
                        io.out,
                        "  the hook an earlier install kept as {} runs first again (`phasegate uninstall` puts it back)",
                        revived.display()
                    );
                }
                match (notes.tracked, &chained) {
                    // Committed, phasegate's hook would replace the
                    // repository's for everyone, and the copy kept here is
                    // in no commit: the team's hook would be gone.
                    (Some(tracked), Some(chained)) => {
                        let _ = writeln!(
                            io.err,
                            "warning: {} is a file of this repository: installing replaced it in your work tree (git status shows it), and the repository's hook is kept as {}, which git does not track. Do not commit {} as it is: everyone else would lose the hook it replaced. To gate everyone's commits, run `phasegate uninstall`, then add the line `{}` to the repository's hook and commit that.",
                            tracked.display(),
                            chained.display(),
                            tracked.display(),
                            hook_line(kind)
                        );
                    }
                    (Some(tracked), None) => {
                        let _ = writeln!(
                            io.err,
                            "warning: {} is a file of this repository: installing changed it in your work tree (git status shows it). Commit that only if everyone should run phasegate; `phasegate uninstall` puts the original back.",
                            tracked.display()
                        );
                    }
                    (None, _) => {}
                }
            }
            Ok(InstallOutcome::GatedAlready {
                path,
                caller,
                removed,
            }) => {
                let how = if caller == path {
                    format!(
                        "the {} hook {} calls phasegate",
                        kind.name(),
                        path.display()
                    )
                } else {
                    format!(
                        "{} calls phasegate, and git runs it through the {} hook {}",
                        caller.display(),
                        kind.name(),
                        path.display()
                    )
                };
                let _ = writeln!(
                    io.out,
                    "the {} gate runs already: {how}; phasegate's own hook there would run the gate a second time on every {}, so it is not installed",
                    kind.name(),
                    if kind == HookKind::PrePush { "push" } else { "commit" }
                );
                match removed {
                    Some(UninstallOutcome::Removed {
                        restored, edited, ..
                    }) => {
                        let _ = writeln!(
                            io.out,
                            "  phasegate's hook an earlier install put there ran the gate a second time: it is removed{}",
                            if restored.is_some() {
                                ", and the hook it replaced is back"
                            } else {
                                ""
                            }
                        );
                        if let Some(edited) = edited {
                            let _ = writeln!(
                                io.out,
                                "  it had been changed (by hand, or by a newer version of phasegate): it is kept as {}, where git does not run it",
                                edited.display()
                            );
                        }
                    }
                    Some(UninstallOutcome::NotInstalled { left, dropped, .. }) => {
                        if let Some(dropped) = dropped {
                            let _ = writeln!(
                                io.out,
                                "  the copy of this hook an earlier install kept, {}, was the same as the hook there now: it is removed",
                                dropped.display()
                            );
                        }
                        if let Some(left) = left {
                            let _ = writeln!(
                                io.err,
                                "note: {} is the {} hook an earlier install replaced, and another hook has taken phasegate's place since: it is not the hook there now, so it is left where it is, and does not run; remove it once you no longer need it",
                                left.display(),
                                kind.name()
                            );
                        }
                    }
                    Some(UninstallOutcome::RestoredOnly { .. }) | None => {}
                }
            }
            Ok(InstallOutcome::LinksToPreCommit {
                path,
                target,
                gated: true,
                keeps,
            }) => {
                let _ = writeln!(
                    io.out,
                    "the pre-merge-commit hook {} is a link of your own to the pre-commit hook beside it ({}): it is left as it is, and at every merge commit it runs the pre-commit hook, which now runs phasegate's gate{}",
                    path.display(),
                    target.display(),
                    match &keeps {
                        Some(keeps) => format!(
                            " after your own hook it keeps ({})",
                            keeps.display()
                        ),
                        None => String::new(),
                    }
                );
            }
            Ok(InstallOutcome::LinksToPreCommit {
                path,
                target,
                gated: false,
                ..
            }) => {
                let _ = writeln!(
                    io.err,
                    "warning: the pre-merge-commit hook {} is a link of your own to the pre-commit hook beside it ({}), which does not run phasegate's gate: the link is left as it is, so merge commits are not gated; run `phasegate install --hook pre-commit` to gate commits, and merge commits through the link",
                    path.display(),
                    target.display()
                );
            }
            Ok(InstallOutcome::AlreadyInstalled {
                path,
                changed,
                edited,
                line_ends: line_ends_file,
                elsewhere,
                merge_link,
            }) => {
                if changed.is_some() {
                    written.push(kind);
                }
                add_line_ends(&mut line_ends, line_ends_file, kind);
                let _ = match changed {
                    None => writeln!(
                        io.out,
                        "the {} hook was already installed: {}",
                        kind.name(),
                        path.display()
                    ),
                    Some(what) => writeln!(
                        io.out,
                        "the {} hook was already installed, and is rewritten: {what}: {}",
                        kind.name(),
                        path.display()
                    ),
                };
                if let Some(edited) = edited {
                    let _ = writeln!(
                        io.out,
                        "  the script that was there had been changed (by hand, or by a newer version of phasegate): it is kept as {}",
                        edited.display()
                    );
                }
                if let Some(link) = merge_link {
                    let _ = writeln!(
                        io.err,
                        "warning: the pre-merge-commit hook {} is a link to the pre-commit hook, so merge commits are let through too when phasegate is not installed; run `phasegate install --fail-closed` to keep both closed",
                        link.display()
                    );
                }
                if let Some(elsewhere) = elsewhere {
                    linked_elsewhere_warning(io, kind, &path, &elsewhere);
                }
            }
            Err(e) => {
                let _ = writeln!(io.err, "error: {}", super::internal_error(&e).message);
                if !written.is_empty() {
                    let names: Vec<&str> = written.iter().map(|kind| kind.name()).collect();
                    let _ = writeln!(
                        io.err,
                        "note: the {} hook{} written before this error stay{} installed; the {} hook was not installed: run `phasegate install` again once this is fixed, or `phasegate uninstall` to remove them",
                        names.join(" and "),
                        if names.len() == 1 { "" } else { "s" },
                        if names.len() == 1 { "s" } else { "" },
                        kind.name()
                    );
                }
                return ExitCode::Usage;
            }
        }
    }
    for (file, kinds) in &line_ends {
        line_ends_note(io, file, kinds);
    }
    for &kind in &wanted {
        husky_note(ctx, io, kind);
    }
    if let Some(another) = git::hooks_of_another(&ctx.cwd) {
        let _ = writeln!(
            io.err,
            "warning: git runs this repository's hooks from {}, the hooks directory of the repository at {} ({}): `phasegate uninstall` there removes them, and this repository is then ungated without a word. {}, then run `phasegate install` again",
            another.dir.display(),
            another.repository.display(),
            if another.unset.is_some() {
                "core.hooksPath names it"
            } else {
                "this repository's hooks directory is a symbolic link to it"
            },
            match &another.unset {
                Some(unset) => format!(
                    "Point core.hooksPath at a directory of this repository's own (`{unset}` for its .git/hooks)"
                ),
                None => "Replace the link with a directory of this repository's own".to_string(),
            }
        );
    }
    if let Some(&kind) = wanted.first() {
        let ungated = git::ungated_worktrees(&ctx.cwd, kind);
        if !ungated.worktrees.is_empty() {
            ungated_note(io, &ungated);
        }
    }
    ExitCode::Proceed
}

pub fn uninstall(ctx: &Context, args: &UninstallArgs, io: &mut Streams<'_>) -> ExitCode {
    if let Some(scope) = git::shared_hooks_scope(&ctx.cwd) {
        let _ = writeln!(
            io.err,
            "note: core.hooksPath is set in your {scope} git configuration: the hooks removed there are removed for every repository that uses it"
        );
    }
    let mut nothing = 0;
    let wanted = kinds(
        &args.hooks,
        &[
            HookKind::PreCommit,
            HookKind::PreMergeCommit,
            HookKind::PrePush,
        ],
    );
    let asked = wanted.len();
    // The hooks taken away: a link of one's own that named one is said.
    let mut removed = Vec::new();
    for kind in wanted {
        match git::uninstall(&ctx.cwd, kind) {
            Ok(UninstallOutcome::Removed {
                path,
                restored,
                edited,
            }) => {
                let _ = writeln!(
                    io.out,
                    "removed the {} hook: {}",
                    kind.name(),
                    path.display()
                );
                removed.push(path.clone());
                if let Some(edited) = edited {
                    let _ = writeln!(
                        io.out,
                        "  it had been changed (by hand, or by a newer version of phasegate): it is kept as {}, where git does not run it",
                        edited.display()
                    );
                }
                if let Some(restored) = restored {
                    let _ = writeln!(
                        io.out,
                        "  the hook it replaced is back: {}",
                        restored.display()
                    );
                }
            }
            Ok(UninstallOutcome::RestoredOnly { path }) => {
                let _ = writeln!(
                    io.out,
                    "the phasegate {} hook was already gone; the hook it replaced is back: {}",
                    kind.name(),
                    path.display()
                );
            }
            Ok(UninstallOutcome::NotInstalled {
                path,
                dropped: Some(dropped),
                ..
            }) => {
                let _ = writeln!(
                    io.out,
                    "removed {}: the copy of the {} hook an earlier install kept, the same as the hook there now",
                    dropped.display(),
                    kind.name()
                );
                let _ = writeln!(
                    io.out,
                    "  the {} hook phasegate's had replaced is in its place, as it was: {}",
                    kind.name(),
                    path.display()
                );
            }
            Ok(UninstallOutcome::NotInstalled {
                path,
                theirs,
                left,
                links_to,
                ..
            }) => {
                if !args.hooks.is_empty() {
                    let _ = if theirs {
                        writeln!(
                            io.out,
                            "no phasegate {} hook is installed: the {} hook there, {}, is not phasegate's, and stays as it is",
                            kind.name(),
                            kind.name(),
                            path.display()
                        )
                    } else {
                        writeln!(io.out, "no phasegate {} hook is installed", kind.name())
                    };
                }
                if let Some(target) = links_to {
                    let _ = writeln!(
                        io.err,
                        "note: the {} hook {} is a symbolic link of your own to phasegate's hook {}: it is left as it is, and still runs that gate; remove the link (`rm {}`) to stop it",
                        kind.name(),
                        path.display(),
                        target.display(),
                        path.display()
                    );
                }
                if let Some(left) = left {
                    let _ = writeln!(
                        io.err,
                        "note: {} is the {} hook an earlier install replaced, and another hook has taken phasegate's place since: it is left where it is, and does not run",
                        left.display(),
                        kind.name()
                    );
                }
                nothing += 1;
            }
            Err(e) => {
                let _ = writeln!(io.err, "error: {}", super::internal_error(&e).message);
                return ExitCode::Usage;
            }
        }
    }
    for left in git::links_left_dangling(&removed) {
        let _ = writeln!(
            io.err,
            "note: {} is a symbolic link to {}, the {} hook removed here: it names nothing now, and git skips it without a word, so no hook runs there. It is yours and is left as it is (it runs that hook again once one is installed there); remove it (`rm {}`) if you no longer need it",
            left.link.display(),
            left.target.display(),
            left.hook.file_name().unwrap_or_default().to_string_lossy(),
            left.link.display()
        );
    }
    if args.hooks.is_empty() && nothing == asked {
        let _ = writeln!(io.out, "no phasegate hook is installed: nothing to remove");
    }
    ExitCode::Proceed
}
