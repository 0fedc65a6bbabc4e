//! `phasegate hook <name>`: what an installed git hook calls. pre-commit
//! checks the staged content; pre-push checks what is being pushed.

use std::io::BufRead;

use crate::cli::HookArgs;
use crate::context::Context;
use crate::exit::ExitCode;

use super::run::{execute, RunRequest, SelectionRequest};
use super::Streams;

pub fn run(ctx: &Context, args: &HookArgs, io: &mut Streams<'_>) -> ExitCode {
    let mut push = None;
    let selections = match args.name.as_str() {
        // A merge's commit records what is staged, as any commit does.
        "pre-commit" | "pre-merge-commit" => vec![(SelectionRequest::Staged, None)],
        // Each pushed ref on its own (those that would check the same
        // commits, once); only deletions and notes leave nothing to check.
        "pre-push" => {
            let root = crate::git::discover(&ctx.cwd)
                .ok()
                .flatten()
                .map(|repo| repo.root);
            // Without a repository every object is taken for a commit: the
            // run that follows says what is wrong.
            let kind = |oid: &str| match &root {
                Some(root) => crate::git::object_kind(root, oid).unwrap_or(Some("commit")),
                None => Some("commit"),
            };
            // git names the remote (or the URL pushed to) first.
            let remote = args.args.first().map(String::as_str);
            let base = |oid: &str| {
                root.as_deref()
                    .and_then(|root| crate::git::pushed_base(root, oid, remote))
            };
            let related = |a: &str, b: &str| {
                root.as_deref()
                    .is_none_or(|root| crate::git::share_history(root, a, b))
            };
            let commit = |spec: &str| {
                root.as_deref()
                    .and_then(|root| crate::git::commit_id(root, spec).ok())
            };
            let pushed = Pushed {
                kind: &kind,
                base: &base,
                related: &related,
                commit: &commit,
            };
            let (selections, notes) = pushed_ranges(std::io::stdin().lock(), &pushed);
            for note in notes {
                let _ = writeln!(io.err, "phasegate: {note}");
            }
            push = Some(push_id(std::time::SystemTime::now(), std::process::id()));
            selections
        }
        other => {
            let _ = writeln!(
                io.err,
                "error: phasegate has no `{other}` hook\nhelp: the hooks are `pre-commit`, `pre-merge-commit` and `pre-push`"
            );
            return ExitCode::Usage;
        }
    };
    // The push goes through only if every ref passes; the code is the
    // gravest of their answers.
    // Once interrupted, a later ref is neither selected nor checked out:
    // it is not checked, and says so.
    let code = selections
        .into_iter()
        .map(|(selection, pushed_ref)| {
            if crate::runner::interrupted() {
                let name = pushed_ref.as_deref().unwrap_or("the rest");
                let _ = writeln!(io.out, "phasegate: `{name}` was not checked: interrupted");
                return ExitCode::Incomplete;
            }
            execute(ctx, &request(selection, pushed_ref, push.clone()), io)
        })
        .max()
        .unwrap_or(ExitCode::Proceed);
    // After the reports, on their stream: git shows a hook's standard output
    // on its standard error, and the reports reach it only when phasegate
    // ends, so a line on standard error came before what it points "above" to.
    if let Some(said) = stopped(&args.name, code) {
        let _ = writeln!(io.out, "\n{said}");
    }
    code
}

/// What a person at `git commit` or `git push` is told when the gate stops
/// it: that nothing was committed or pushed, and how to go on.
fn stopped(hook: &str, code: ExitCode) -> Option<String> {
    let (what, again) = match hook {
        "pre-push" => ("push", "push again"),
        "pre-merge-commit" => ("merge commit", "`git commit` to finish the merge"),
        _ => ("commit", "commit again"),
    };
    // A push checks commits: the fixes go into one before the next push.
    let record = if hook == "pre-push" {
        "commit the fixes (and any files a check changed, once you have read them)"
    } else {
        "`git add` the fixes (and any files a check changed, once you have read them)"
    };
    let how = match code {
        ExitCode::Proceed => return None,
        ExitCode::Failed => format!("fix what is listed above, {record}, then {again}"),
        ExitCode::Usage => format!("fix the configuration or command named above, then {again}"),
        ExitCode::Incomplete => format!(
            "remove what stopped the checks (above), then {again}; `phasegate resume` runs again only what did not finish"
        ),
        ExitCode::Escalate => format!(
            "the gate asks for a person (above): if that is you, fix the errors that keep coming back and {again}; `phasegate history` shows the runs"
        ),
    };
    Some(format!(
        "phasegate stopped the {what} (the {hook} hook): {how}. `--no-verify` skips the gate here, not in CI."
    ))
}

/// What tells the runs of one push from every other run: the id of the
/// hook's process (git starts one per push) and the instant it read the
/// push, to the nanosecond, so that a process id given out again later
/// never joins another push to this one.
fn push_id(now: std::time::SystemTime, pid: u32) -> String {
    let nanos = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{}.{nanos:09}", crate::state::run_id(now, pid))
}

fn request(
    selection: SelectionRequest,
    pushed_ref: Option<String>,
    push: Option<String>,
) -> RunRequest {
    RunRequest {
        phase: None,
        profile: None,
        workflow: None,
        checks: Vec::new(),
        selection,
        format: crate::cli::ReportFormat::Human,
        output: None,
        reports: Vec::new(),
        jobs: None,
        config_from_ref: None,
        resume_of: None,
        pushed_ref,
        push,
    }
}

/// What a pre-push hook checks, from the lines git writes on its standard
/// input, one per pushed ref: `<local ref> <local oid> <remote ref> <remote
/// oid>`. An updated branch checks its range; a new one (no remote oid)
/// the commits the remote does not have (`base`, see `git::pushed_base`),
/// or every file of its commit when that can not be told; a deletion,
/// and notes (`refs/notes/`), nothing. `kind` says what an object is here
/// (see `git::object_kind`): a pushed tree or blob (a tag of one) has no
/// commit to check, and a remote commit that was never fetched (a force
/// push over it) leaves no range, so the pushed commit is checked as a new
/// branch is, as it is when the remote's commit shares no history with it
/// here (a force push of a new history, or a shallow clone). The notes say
/// so. Each selection comes with the local ref it checks; refs that check
/// the same commits come once, with all their names. An annotated tag
/// is taken for the commit it points at.
fn pushed_ranges(
    input: impl BufRead,
    pushed: &Pushed<'_>,
) -> (Vec<(SelectionRequest, Option<String>)>, Vec<String>) {
    let Pushed {
        kind,
        base,
        related,
        commit,
    } = pushed;
    let mut selections = Vec::new();
    let mut notes = Vec::new();
    // Bytes, not text: a ref's name need not be UTF-8 (git allows any byte
    // but a few), and a line read as text would end the reading there,
    // leaving that ref and every one after it unchecked.
    for line in input.split(b'\n').map_while(Result::ok) {
        let line = crate::context::escaped_bytes(&line);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [local_ref, local, remote_ref, remote] = fields.as_slice() else {
            continue;
        };
        if crate::git::is_zero_id(local) {
            continue;
        }
        // Notes (`git notes`) annotate commits; their own commits hold
        // no file of the project, and the project's checks run in a
        // checkout of one would only fail.
        if let Some(notes_ref) = [local_ref, remote_ref]
            .into_iter()
            .find(|name| name.starts_with("refs/notes/"))
        {
            notes.push(format!(
                "`{notes_ref}` holds notes (`git notes`), not the project's files: it has no files to check"
            ));
            continue;
        }
        match kind(local) {
            Some("commit") | None => {}
            Some(other) => {
                notes.push(format!(
                    "`{local_ref}` is a {other}, not a commit: it has no files to check"
                ));
                continue;
            }
        }
        // An annotated tag is named by its tag object: what is checked,
        // reported and recorded is the commit it points at.
        let local = commit(local).unwrap_or_else(|| (*local).to_string());
        let remote_kind = if crate::git::is_zero_id(remote) {
            None
        } else {
            kind(remote)
        };
        let remote = match remote_kind {
            Some(_) => commit(remote).unwrap_or_else(|| (*remote).to_string()),
            None => (*remote).to_string(),
        };
        let new_branch = |local: &str| match base(local) {
            Some(from) => SelectionRequest::Range {
                from,
                to: local.to_string(),
            },
            None => SelectionRequest::AllOf(local.to_string()),
        };
        let selection = if crate::git::is_zero_id(&remote) {
            new_branch(&local)
        } else if remote_kind.is_none() {
            notes.push(format!(
                "`{remote_ref}` is at {remote} on the remote, a commit that was never fetched here: {local} is checked as a new branch"
            ));
            new_branch(&local)
        } else if !related(&remote, &local) {
            notes.push(format!(
                "`{remote_ref}` is at {remote} on the remote, a commit that shares no history with {local} here (a force push of a new history, or a shallow clone): {local} is checked as a new branch"
            ));
            new_branch(&local)
        } else {
            SelectionRequest::Range {
                from: remote,
                to: local,
            }
        };
        selections.push((selection, Some((*local_ref).to_string())));
    }
    (same_checked_once(selections, commit), notes)
}

/// The commit a pushed ref's range starts from (none for every file of a
/// commit), and the one it ends at.
type Checks = (Option<String>, String);

/// The pushed refs that would check the same commits (a branch and the
/// tags on its commit, `git push --follow-tags`) checked once, the run
/// naming them all: each run is one in the history, and one push that
/// checked the same failure three times would be taken for three failed
/// attempts in a row, and escalate to a person at once. `commit` gives
/// the full id of the commit a name stands for (a tag's, say); refs whose
/// commits it cannot name are checked on their own.
fn same_checked_once(
    selections: Vec<(SelectionRequest, Option<String>)>,
    commit: &dyn Fn(&str) -> Option<String>,
) -> Vec<(SelectionRequest, Option<String>)> {
    let key = |selection: &SelectionRequest| match selection {
        SelectionRequest::Range { from, to } => Some((Some(commit(from)?), commit(to)?)),
        SelectionRequest::AllOf(spec) => Some((None, commit(spec)?)),
        _ => None,
    };
    let mut out: Vec<(SelectionRequest, Option<String>, Option<Checks>)> = Vec::new();
    for (selection, pushed_ref) in selections {
        let checks = key(&selection);
        let earlier = checks
            .as_ref()
            .and_then(|checks| out.iter_mut().find(|(_, _, k)| k.as_ref() == Some(checks)));
        match (earlier, pushed_ref) {
            (Some((_, Some(named), _)), Some(pushed_ref)) => {
                named.push_str(", ");
                named.push_str(&pushed_ref);
            }
            (_, pushed_ref) => out.push((selection, pushed_ref, checks)),
        }
    }
    out.into_iter()
        .map(|(selection, pushed_ref, _)| (selection, pushed_ref))
        .collect()
}

/// What a pre-push hook asks of the repository about the objects a push
/// names: what an object is (see `git::object_kind`), where a new branch's
/// history leaves the remote's (see `git::pushed_base`), whether two
/// commits share history (see `git::share_history`), and which commit a
/// name stands for.
struct Pushed<'a> {
    kind: &'a dyn Fn(&str) -> Option<&'static str>,
    base: &'a dyn Fn(&str) -> Option<String>,
    related: &'a dyn Fn(&str, &str) -> bool,
    /// The full id of the commit a name stands for (see `git::commit_id`).
    commit: &'a dyn Fn(&str) -> Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the hook asks, answered by the closures given.
    fn ranges(
        input: &str,
        kind: impl Fn(&str) -> Option<&'static str>,
        base: impl Fn(&str) -> Option<String>,
        related: impl Fn(&str, &str) -> bool,
    ) -> (Vec<(SelectionRequest, Option<String>)>, Vec<String>) {
        let pushed = Pushed {
            kind: &kind,
            base: &base,
            related: &related,
            commit: &|_: &str| None,
        };
        pushed_ranges(input.as_bytes(), &pushed)
    }

    #[test]
    fn a_stopped_push_is_told_to_commit_its_fixes_and_a_commit_to_stage_them() {
        let push = stopped("pre-push", ExitCode::Failed).unwrap_or_default();
        assert!(push.contains("commit the fixes"), "{push}");
        assert!(!push.contains("git add"), "{push}");
        let commit = stopped("pre-commit", ExitCode::Failed).unwrap_or_default();
        assert!(commit.contains("`git add` the fixes"), "{commit}");
        assert_eq!(stopped("pre-push", ExitCode::Proceed), None);
    }

    #[test]
    fn pushed_ranges_one_per_ref() {
        let zero = "0".repeat(40);
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let line = |l: &str, r: &str| format!("refs/heads/x {l} refs/heads/x {r}\n");
        let known = |_: &str| Some("commit");
        let unknown = |_: &str| None;
        let related = |_: &str, _: &str| true;
        let (pushed, notes) = ranges(
            &[line(&a, &b), line(&b, &zero), line(&zero, &a)].concat(),
            known,
            unknown,
            related,
        );
        assert!(matches!(
            pushed.as_slice(),
            [
                (SelectionRequest::Range { from, to }, Some(first)),
                (SelectionRequest::AllOf(new), Some(second)),
            ] if *from == b && *to == a && *new == b
                && first == "refs/heads/x" && second == "refs/heads/x"
        ));
        assert!(notes.is_empty());
        // A new branch whose history leaves the remote's at `a`.
        let (pushed, _) = ranges(
            &line(&b, &zero),
            known,
            |_: &str| Some("a".repeat(40)),
            related,
        );
        assert!(matches!(
            pushed.as_slice(),
            [(SelectionRequest::Range { from, to }, Some(_))] if *from == a && *to == b
        ));
        assert!(ranges(&line(&zero, &b), known, unknown, related)
            .0
            .is_empty());
        assert!(ranges("", known, unknown, related).0.is_empty());
    }

    #[test]
    fn a_pushed_tree_is_not_checked_and_an_unknown_remote_commit_checks_every_file() {
        let (a, b, t) = ("a".repeat(40), "b".repeat(40), "c".repeat(40));
        let kind = |oid: &str| match oid.as_bytes()[0] {
            b'a' => Some("commit"),
            b'c' => Some("tree"),
            _ => None,
        };
        let input = format!(
            "refs/heads/x {a} refs/heads/x {b}\nrefs/tags/t {t} refs/tags/t {}\n",
            "0".repeat(40)
        );
        let (pushed, notes) = ranges(&input, kind, |_: &str| None, |_: &str, _: &str| true);
        assert!(
            matches!(pushed.as_slice(), [(SelectionRequest::AllOf(all), Some(_))] if *all == a)
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
    }

    #[test]
    fn refs_that_check_the_same_commits_are_checked_once_naming_them_all() {
        let (a, b, c, t) = (
            "a".repeat(40),
            "b".repeat(40),
            "c".repeat(40),
            "d".repeat(40),
        );
        // `t` is a tag of `a`; `c` is a commit nothing can name here.
        let commit = |spec: &str| match spec.as_bytes()[0] {
            b'a' | b'd' => Some(a.clone()),
            b'b' => Some(b.clone()),
            _ => None,
        };
        let selections = vec![
            (
                SelectionRequest::Range {
                    from: b.clone(),
                    to: a.clone(),
                },
                Some("refs/heads/main".to_string()),
            ),
            (
                SelectionRequest::AllOf(a.clone()),
                Some("refs/heads/new".to_string()),
            ),
            (
                SelectionRequest::Range {
                    from: b.clone(),
                    to: t.clone(),
                },
                Some("refs/tags/v1".to_string()),
            ),
            (
                SelectionRequest::AllOf(t.clone()),
                Some("refs/tags/v2".to_string()),
            ),
            (
                SelectionRequest::Range {
                    from: b.clone(),
                    to: c.clone(),
                },
                Some("refs/heads/c1".to_string()),
            ),
            (
                SelectionRequest::Range {
                    from: b.clone(),
                    to: c.clone(),
                },
                Some("refs/heads/c2".to_string()),
            ),
        ];
        let once = same_checked_once(selections, &commit);
        let named: Vec<&str> = once.iter().filter_map(|(_, r)| r.as_deref()).collect();
        assert_eq!(
            named,
            [
                "refs/heads/main, refs/tags/v1",
                "refs/heads/new, refs/tags/v2",
                "refs/heads/c1",
                "refs/heads/c2"
            ]
        );
        assert!(matches!(&once[0].0, SelectionRequest::Range { to, .. } if *to == a));
    }

    #[test]
    fn a_ref_whose_name_is_not_utf8_is_read_with_the_refs_after_it_and_notes_are_not() {
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let mut input = b"refs/heads/caf".to_vec();
        input.extend_from_slice(&[0xe9]);
        input.extend_from_slice(format!(" {a} refs/heads/x {b}\n").as_bytes());
        input.extend_from_slice(
            format!("refs/notes/commits {a} refs/notes/commits {b}\n").as_bytes(),
        );
        input.extend_from_slice(format!("refs/heads/y {a} refs/heads/y {b}\n").as_bytes());
        let pushed = Pushed {
            kind: &|_: &str| Some("commit"),
            base: &|_: &str| None,
            related: &|_: &str, _: &str| true,
            commit: &|_: &str| None,
        };
        let (selections, notes) = pushed_ranges(input.as_slice(), &pushed);
        let named: Vec<&str> = selections
            .iter()
            .filter_map(|(_, r)| r.as_deref())
            .collect();
        assert_eq!(named, ["refs/heads/caf\\xe9", "refs/heads/y"]);
        assert!(
            notes[0].contains("`refs/notes/commits` holds notes"),
            "{notes:?}"
        );
    }

    #[test]
    fn a_force_push_of_unrelated_history_checks_every_file() {
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let input = format!("refs/heads/x {a} refs/heads/x {b}\n");
        let (pushed, notes) = ranges(
            &input,
            |_: &str| Some("commit"),
            |_: &str| None,
            |_: &str, _: &str| false,
        );
        assert!(
            matches!(pushed.as_slice(), [(SelectionRequest::AllOf(all), Some(_))] if *all == a)
        );
        assert!(notes[0].contains("shares no history"), "{notes:?}");
    }
}
