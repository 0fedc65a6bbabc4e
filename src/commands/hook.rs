//! `phasegate hook <name>`: what an installed git hook calls. pre-commit
//! checks the staged content; pre-push checks what is being pushed.

use std::io::BufRead;

use crate::cli::HookArgs;
use crate::context::Context;
use crate::exit::ExitCode;
use crate::git::PushedBase;

use super::run::{execute, RunRequest, SelectionRequest};
use super::Streams;

pub fn run(ctx: &Context, args: &HookArgs, io: &mut Streams<'_>) -> ExitCode {
    // A Ctrl-C at a push reaches git, the hook and phasegate at once. Left
    // to its default action it would end phasegate between two refs' runs
    // with the refs after it neither checked nor kept: the push is refused,
    // yet `phasegate resume` would find only the runs that passed and say
    // so. Caught for the whole hook, it stops what runs and keeps the rest
    // for the resume.
    let _interrupts = (args.name == "pre-push").then(crate::runner::InterruptGuard::install);
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
            let older = |tips: &[String], among: &[String]| {
                root.as_deref().map_or_else(Default::default, |root| {
                    crate::git::ancestors_among(root, tips, among)
                })
            };
            let published = |among: &[String]| {
                root.as_deref()
                    .and_then(|root| crate::git::published_among(root, remote, among))
            };
            let made_on = |spec: &str, known: Option<&str>| {
                root.as_deref()
                    .and_then(|root| crate::git::published_parents(root, spec, remote, known))
            };
            let pushed = Pushed {
                remote: remote.unwrap_or("the remote"),
                kind: &kind,
                base: &base,
                related: &related,
                commit: &commit,
                older: &older,
                published: &published,
                made_on: &made_on,
            };
            let (selections, notes) = match pushed_ranges(std::io::stdin().lock(), &pushed) {
                Ok(read) => read,
                Err(unreadable) => {
                    let _ = writeln!(
                        io.err,
                        "error: {unreadable}\nhelp: git writes one such line per pushed ref; a script or hook manager that runs `phasegate hook pre-push` must pass git's standard input on unchanged. Nothing was checked."
                    );
                    if let Some(said) = stopped(&args.name, ExitCode::Usage, &[]) {
                        let _ = writeln!(io.out, "\n{said}");
                    }
                    return ExitCode::Usage;
                }
            };
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
    // The pushed refs whose run stopped the push, for the last word: with
    // forty refs, the reports above are pages long.
    let mut refused: Vec<String> = Vec::new();
    // The push goes through only if every ref passes; the code is the
    // gravest of their answers.
    // Once interrupted, a later ref is neither selected nor checked out:
    // it is not checked, and says so. It is kept with the push's runs, for
    // `phasegate resume` to check it with them.
    let mut unreached = Vec::new();
    let mut ran = false;
    let code = selections
        .into_iter()
        .map(|(selection, pushed_ref)| {
            if ran && push.is_some() && ctx.pause_at.is_some() {
                ctx.maybe_pause("push-next-ref", &super::state::state_dir_for(ctx));
            }
            // The first ref runs even when the push was interrupted while
            // it was read: its run, interrupted at once, is what puts the
            // push in the history, where `phasegate resume` finds it and
            // the refs kept beside it; without one they would be kept for
            // nobody.
            let code = if ran && crate::runner::interrupted() {
                not_reached(io.out, pushed_ref.as_deref().unwrap_or("the rest"));
                unreached.push((selection, pushed_ref.clone()));
                ExitCode::Incomplete
            } else {
                ran = true;
                execute(
                    ctx,
                    &request(selection, pushed_ref.clone(), push.clone()),
                    io,
                )
            };
            if code != ExitCode::Proceed {
                // One run names every ref that checks its commits.
                refused.extend(
                    pushed_ref
                        .iter()
                        .flat_map(|r| r.split(", ").map(String::from)),
                );
            }
            code
        })
        .max()
        .unwrap_or(ExitCode::Proceed);
    if let Some(push) = &push {
        keep_unreached(ctx, push, &unreached, io);
    }
    // An interrupted push never goes on as if it had passed, whatever its
    // runs said before the interrupt (a hook manager's SIGTERM reaches
    // phasegate alone, and git would push).
    let code = if push.is_some() && crate::runner::interrupted() {
        code.max(ExitCode::Incomplete)
    } else {
        code
    };
    // After the reports, on their stream: git shows a hook's standard output
    // on its standard error, and the reports reach it only when phasegate
    // ends, so a line on standard error came before what it points "above" to.
    if let Some(said) = stopped(&args.name, code, &refused) {
        let _ = writeln!(io.out, "\n{said}");
    }
    code
}

/// What a person at `git commit` or `git push` is told when the gate stops
/// it: that nothing was committed or pushed (of a push, for which of its
/// refs: `refused`), how to go on, and the command that goes on without
/// the gate when a person decides to, written out: `--no-verify` alone
/// does not say which command takes it.
fn stopped(hook: &str, code: ExitCode, refused: &[String]) -> Option<String> {
    let (what, again, skip) = match hook {
        "pre-push" => ("push", "push again", "git push --no-verify"),
        "pre-merge-commit" => (
            "merge commit",
            "`git commit` to finish the merge",
            "git commit --no-verify",
        ),
        _ => ("commit", "commit again", "git commit --no-verify"),
    };
    let refs = match refused {
        [] => String::new(),
        names => format!(" for {}", names_of(names)),
    };
    // A push checks commits: the fixes go into one before the next push.
    let record = if hook == "pre-push" {
        "commit the fixes (and any files a check changed, once you have read them)"
    } else {
        "`git add` the fixes (and any files a check changed, once you have read them)"
    };
    // A tag stays on the commit that failed: pushed again as it is, it
    // fails again. The fixes are a new commit, and the tag moves to it.
    let tags: Vec<&str> = refused
        .iter()
        .filter_map(|name| {
            let made = name
                .rsplit_once(':')
                .map_or(name.as_str(), |(_, made)| made);
            made.strip_prefix("refs/tags/")
        })
        .collect();
    let retag = match tags.as_slice() {
        [] => String::new(),
        [one] => format!(", move the tag onto that commit (`git tag -f {one}`; with `-a` or `-s` for an annotated one)"),
        _ => ", move the tags onto that commit (`git tag -f NAME` for each; with `-a` or `-s` for an annotated one)".to_string(),
    };
    let how = match code {
        ExitCode::Proceed => return None,
        ExitCode::Failed => format!("fix what is listed above, {record}{retag}, then {again}"),
        ExitCode::Usage => format!("fix the configuration or command named above, then {again}"),
        ExitCode::Incomplete => format!(
            "remove what stopped the checks (above), then {again}; `phasegate resume` runs again only what did not finish"
        ),
        ExitCode::Escalate => format!(
            "the gate asks for a person (the note above says why): if that is you, deal with what it names and {again}; `phasegate history` shows the runs"
        ),
    };
    Some(format!(
        "phasegate stopped the {what}{refs} (the {hook} hook): {how}. `{skip}` skips the gate here, not in CI."
    ))
}

/// Says that the pushed ref `name` was not checked, an interrupt having
/// come first (the hook's, or a resume's of the push).
pub(super) fn not_reached(out: &mut dyn std::io::Write, name: &str) {
    let _ = writeln!(
        out,
        "phasegate: `{name}` was not checked: interrupted; `phasegate resume` checks it"
    );
}

/// Keeps the refs of the push `push` that were not checked (`unreached`,
/// a Ctrl-C having stopped the push before their runs began) beside the
/// push's runs, for `phasegate resume` to check them with those: without
/// them a resume checks again only the ref that was interrupted, and the
/// others are known only by pushing again. A record that cannot be written
/// is said, with what to do instead.
pub(super) fn keep_unreached(
    ctx: &Context,
    push: &str,
    unreached: &[(SelectionRequest, Option<String>)],
    io: &mut Streams<'_>,
) {
    if unreached.is_empty() {
        return;
    }
    let refs = unreached
        .iter()
        .map(|(selection, pushed_ref)| unreached_record(selection, pushed_ref.clone(), push))
        .collect();
    let state_dir = super::state::state_dir_for(ctx);
    let work_tree = super::state::work_tree_for(ctx);
    if let Err(e) = crate::state::record_unreached(&state_dir, push, &work_tree, refs) {
        let _ = writeln!(
            io.err,
            "warning: {e}; `phasegate resume` will not check the refs the push did not reach: push again to check them"
        );
    }
}

/// What an unchecked pushed ref would have checked, as the history keeps a
/// run's files (see `resume::selection_of`): a range, the commits of a
/// push after a merge, or every file of a commit.
fn unreached_record(
    selection: &SelectionRequest,
    pushed_ref: Option<String>,
    push: &str,
) -> crate::state::SelectionRecord {
    let (mode, from, to, published) = match selection {
        SelectionRequest::Range { from, to } => {
            ("range", Some(from.clone()), Some(to.clone()), Vec::new())
        }
        SelectionRequest::Pushed { to, published } => {
            ("range", None, Some(to.clone()), published.clone())
        }
        SelectionRequest::AllOf(commit) => ("all", None, Some(commit.clone()), Vec::new()),
        // A push selects only the above; anything else is resumed as the
        // whole project, never as nothing.
        _ => ("all", None, None, Vec::new()),
    };
    crate::state::SelectionRecord {
        mode: mode.to_string(),
        from,
        to,
        pushed_ref,
        push: Some(push.to_string()),
        published,
        ..crate::state::SelectionRecord::default()
    }
}

/// What tells the runs of one push from every other run: the id of the
/// hook's process (git starts one per push) and the instant it read the
/// push, to the nanosecond, so that a process id given out again later
/// never joins another push to this one.
pub(super) fn push_id(now: std::time::SystemTime, pid: u32) -> String {
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
/// oid>`. An updated branch checks its range (a rewritten one, not a
/// fast-forward of the remote's commit, what its commits change since they
/// left what the remote has); a new one (no remote oid)
/// the commits the remote does not have (`base`, see `git::pushed_base`),
/// or every file of its commit when that can not be told; a deletion,
/// notes (`refs/notes/`) and remote-tracking refs (`refs/remotes/`, which
/// `git push --mirror` sends), nothing. A ref that adds no commit to
/// what was published (a tag of a commit `origin/main` holds, a branch
/// made where another already is; `published`, asked once for the whole
/// push) checks nothing: its commits reached a remote before, through the
/// gate then, and checking them again runs today's whole-project checks
/// on old code for nothing. pre-commit skips such a ref alike. `kind` says
/// what an object is here
/// (see `git::object_kind`): a pushed tree or blob (a tag of one) has no
/// commit to check, and a remote commit that was never fetched (a force
/// push over it) leaves no range, so the pushed commit is checked as a new
/// branch is, as it is when the remote's commit shares no history with it
/// here (a force push of a new history, or a shallow clone). The notes say
/// so. Where the commits new to the remote merge in commits published
/// already, what they change is checked, not what the merge brought in
/// (see `git::published_parents`). Each selection comes with the local
/// ref it checks; refs that check
/// the same commits come once, with all their names, and a tag below
/// another pushed ref is left to it (see `tags_left_to_other_refs`). An
/// annotated tag is taken for the commit it points at.
fn pushed_ranges(input: impl BufRead, pushed: &Pushed<'_>) -> Result<PushRead, Unreadable> {
    let Pushed {
        remote: remote_name,
        kind,
        base,
        related,
        commit,
        older,
        published,
        made_on,
    } = pushed;
    let mut lines = Vec::new();
    let mut notes = Vec::new();
    let mut tracking = Vec::new();
    let mut deleted = Vec::new();
    // Bytes, not text: a ref's name need not be UTF-8 (git allows any byte
    // but a few), and a line read as text would end the reading there,
    // leaving that ref and every one after it unchecked.
    for (at, line) in input.split(b'\n').enumerate() {
        let line = line.map_err(|e| Unreadable::Input(e.to_string()))?;
        let line = crate::context::escaped_bytes(&line);
        let fields: Vec<&str> = line.split_whitespace().collect();
        // A line git did not write (a hook manager that passes on its own
        // text, a script that calls the hook by hand) says nothing of what
        // is pushed: skipped, the ref it stood for would go out unchecked.
        let [local_ref, local, remote_ref, remote] = fields.as_slice() else {
            if fields.is_empty() {
                continue;
            }
            return Err(Unreadable::Line(at + 1, line));
        };
        if !is_object_id(local) || !is_object_id(remote) {
            return Err(Unreadable::Line(at + 1, line));
        }
        // A deletion sends no commit: nothing to check, and said, so that
        // a push of a deletion and a branch does not read as the branch
        // alone.
        if crate::git::is_zero_id(local) {
            deleted.push((*remote_ref).to_string());
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
        // `git push --mirror` sends the remote-tracking refs too: what
        // `origin` had when last fetched, a colleague's commits among
        // them. That is nobody's new work here, published where it came
        // from and gated there; judged as this push's, a mirror push
        // would be refused for someone else's change.
        if local_ref.starts_with("refs/remotes/") {
            tracking.push((*local_ref).to_string());
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
        lines.push((
            (*local_ref).to_string(),
            local,
            (*remote_ref).to_string(),
            remote,
            remote_kind,
        ));
    }
    if !deleted.is_empty() {
        let (is, them) = if deleted.len() == 1 {
            ("is", "it")
        } else {
            ("are", "them")
        };
        notes.push(format!(
            "{} {is} deleted on the remote by this push: nothing is checked for {them}",
            names_of(&deleted)
        ));
    }
    if !tracking.is_empty() {
        let (are, them) = if tracking.len() == 1 {
            ("is a remote-tracking ref", "it")
        } else {
            ("are remote-tracking refs", "them")
        };
        notes.push(format!(
            "{} {are} (what another repository had when this one last fetched from it), not new work: nothing is checked for {them}",
            names_of(&tracking)
        ));
    }
    // What was published already, asked once for the whole push.
    let pushed_commits: Vec<String> = lines.iter().map(|line| line.1.clone()).collect();
    let (known, by) = published(&pushed_commits).unwrap_or_default();
    // The refs that add no commit, by the remotes that said so (none for
    // the remote pushed to).
    let mut adding_nothing: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    let mut add_nothing = |name: String, others: Vec<String>| match adding_nothing
        .iter_mut()
        .find(|(by, _)| *by == others)
    {
        Some((_, names)) => names.push(name),
        None => adding_nothing.push((others, vec![name])),
    };
    let mut refs = Vec::new();
    for (local_ref, local, remote_ref, remote, remote_kind) in lines {
        let name = pushed_name(&local_ref, &remote_ref);
        if known.contains(&local) {
            add_nothing(name, by.clone());
            continue;
        }
        let mut new_branch = |local: &str, notes: &mut Vec<String>| match base(local) {
            Some(PushedBase { from, others }) if from == local => {
                add_nothing(name.clone(), others);
                None
            }
            Some(PushedBase { from, others }) => {
                if !others.is_empty() {
                    notes.push(format!(
                        "`{remote_name}` has no remote-tracking refs here (a new remote, or one never fetched): `{local_ref}` is checked from where its history leaves what {} had, {}",
                        listed(&others),
                        short(&from)
                    ));
                }
                Some(SelectionRequest::Range {
                    from,
                    to: local.to_string(),
                })
            }
            None => Some(SelectionRequest::AllOf(local.to_string())),
        };
        // The commit the ref had on the remote, when it is here.
        let known = remote_kind.is_some().then(|| remote.clone());
        let selection = if crate::git::is_zero_id(&remote) {
            new_branch(&local, &mut notes)
        } else if remote_kind.is_none() {
            notes.push(format!(
                "`{remote_ref}` is at {remote} on the remote, a commit that was never fetched here: {local} is checked as a new branch"
            ));
            new_branch(&local, &mut notes)
        } else if !related(&remote, &local) {
            notes.push(format!(
                "`{remote_ref}` is at {remote} on the remote, a commit that shares no history with {local} here (a force push of a new history, or a shallow clone): {local} is checked as a new branch"
            ));
            new_branch(&local, &mut notes)
        } else if older(std::slice::from_ref(&local), std::slice::from_ref(&remote))
            .contains(&remote)
        {
            Some(SelectionRequest::Range {
                from: remote,
                to: local.clone(),
            })
        } else {
            // Not a fast-forward: a rebase onto a newer `main`, then
            // `git push --force-with-lease`. The range from the remote's
            // old commit counts from where the two histories met, and so
            // holds every change the rebase brought in from `main`,
            // published and gated before: the pushed commits are those no
            // remote-tracking ref reaches, as for a new branch.
            match base(&local) {
                Some(PushedBase { from, others }) if from == local => {
                    add_nothing(name.clone(), others);
                    None
                }
                Some(PushedBase { from, .. }) => {
                    notes.push(format!(
                        "`{local_ref}` rewrites `{remote_ref}` (a rebase, an amend or a force push): what is checked is what its commits change since they left what the remote has, at {}",
                        short(&from)
                    ));
                    Some(SelectionRequest::Range {
                        from,
                        to: local.clone(),
                    })
                }
                None => Some(SelectionRequest::Range {
                    from: remote,
                    to: local.clone(),
                }),
            }
        };
        // A merge of commits published already (`git merge main` on a
        // pushed branch): the range from the remote's commit holds every
        // file the merge brought in from `main`, published and gated
        // there. What is checked is what the commits new to the remote
        // change: the files the tip holds otherwise than each published
        // commit they were made on, so a conflict resolved by hand is.
        let selection = selection.map(|selection| match selection {
            SelectionRequest::Range { from, to } => match made_on(&to, known.as_deref()) {
                Some(mut made) if made.len() > 1 => {
                    // The pushed ref's own line first.
                    if let Some(at) = made.iter().position(|id| *id == from) {
                        made[..=at].rotate_right(1);
                    }
                    notes.push(format!(
                        "`{local_ref}` merges in commits published already: what is checked is what its own commits change (`git log {} --not {}`), not the files the merge took unchanged from those",
                        short(&to),
                        made.iter().map(|id| short(id)).collect::<Vec<_>>().join(" ")
                    ));
                    SelectionRequest::Pushed {
                        to,
                        published: made,
                    }
                }
                _ => SelectionRequest::Range { from, to },
            },
            other => other,
        });
        if let Some(selection) = selection {
            refs.push(PushedRef {
                selection,
                name,
                commit: local,
                tag: remote_ref.starts_with("refs/tags/"),
            });
        }
    }
    for (others, names) in adding_nothing {
        let (add, them) = if names.len() == 1 {
            ("adds", "it")
        } else {
            ("add", "them")
        };
        let what = if others.is_empty() {
            format!("the remote does not have (its remote-tracking refs reach {them})")
        } else {
            format!(
                "that was not published before ({} {} {them}; `{remote_name}` has no remote-tracking refs here)",
                listed(&others),
                if others.len() == 1 { "has" } else { "have" }
            )
        };
        notes.push(format!(
            "{} {add} no commit {what}: nothing is checked for {them}",
            names_of(&names)
        ));
    }
    let (refs, left) = tags_left_to_other_refs(refs, *older);
    if !left.is_empty() {
        let one = left.len() == 1;
        notes.push(format!(
            "{} {} on {} in the history of another ref this push checks: not checked on {} own",
            names_of(&left),
            if one { "is" } else { "are" },
            if one { "a commit" } else { "commits" },
            if one { "its" } else { "their" },
        ));
    }
    let selections = refs
        .into_iter()
        .map(|pushed| (pushed.selection, Some(pushed.name)))
        .collect();
    Ok((same_checked_once(selections, commit), notes))
}

/// What a push checks, each selection with the refs it checks, and the
/// notes that say what was left out and why (see `pushed_ranges`).
type PushRead = (Vec<(SelectionRequest, Option<String>)>, Vec<String>);

/// Standard input that is not what git writes to a pre-push hook: nothing
/// can be told of what is pushed, so nothing is checked and the push is
/// stopped.
#[derive(Debug, PartialEq, Eq)]
enum Unreadable {
    /// A line (numbered from 1, as written) not of four fields with
    /// object ids where git puts them.
    Line(usize, String),
    /// Standard input could not be read.
    Input(String),
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::Line(at, line) => {
                // A line of any length is named by its start.
                let shown: String = line.chars().take(200).collect();
                let more = if shown.len() < line.len() { "…" } else { "" };
                write!(
                    f,
                    "line {at} of the pushed refs on standard input is not `<local ref> <local oid> <remote ref> <remote oid>`: `{shown}{more}`"
                )
            }
            Unreadable::Input(error) => write!(
                f,
                "failed to read the pushed refs from standard input: {error}"
            ),
        }
    }
}

/// Whether `id` is an object id as git writes one to a pre-push hook: the
/// whole id, SHA-1 or SHA-256, in hexadecimal (zeros for none).
fn is_object_id(id: &str) -> bool {
    matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Refs as a note names them: the first ten, and how many more, so that
/// the note on a mirror's four hundred tags stays a line.
fn names_of(names: &[String]) -> String {
    const SHOWN: usize = 10;
    let shown = names
        .iter()
        .take(SHOWN)
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match names.len().checked_sub(SHOWN) {
        Some(more) if more > 0 => format!("{shown} and {more} more"),
        _ => shown,
    }
}

/// A pushed ref about to be checked.
struct PushedRef {
    selection: SelectionRequest,
    /// The local ref, as git names it to the hook.
    name: String,
    /// The full id of the commit it pushes, when it can be told.
    commit: String,
    /// Whether it makes a tag on the remote.
    tag: bool,
}

/// The pushed tags whose commit another pushed ref checks, taken out of
/// `refs` and named. `git push --tags`, `--follow-tags` or `--mirror`
/// to a new mirror sends every release tag the repository ever made; each
/// one checked on its own, as a new branch, is every file of a years-old
/// commit, once per release, refused for code that shipped long ago and
/// can no longer change (a tag is not moved to fix it). A tag marks a
/// commit on a line of work, and the line is what is checked: a tag below
/// a pushed branch (or a newer pushed tag) is in what that ref's run
/// checks, as any commit of a pushed range is, and is left to it. A tag on
/// the very commit of another pushed ref is checked with it, the run
/// naming both (`same_checked_once`); a tag on a commit nothing else
/// pushed reaches is still checked on its own. Branches are never left
/// out so: each is a line of work the remote's CI builds on its own.
/// pre-commit checks only the first ref of a push that adds commits, and
/// lefthook and husky do not read the pushed refs at all; phasegate checks
/// every line of work, once.
fn tags_left_to_other_refs(
    mut refs: Vec<PushedRef>,
    older: &Older<'_>,
) -> (Vec<PushedRef>, Vec<String>) {
    let tags: Vec<String> = refs
        .iter()
        .filter(|r| r.tag)
        .map(|r| r.commit.clone())
        .collect();
    if tags.is_empty() {
        return (refs, Vec::new());
    }
    // A tag on a branch's commit is checked as that branch is, so that
    // both come to the one run, whatever each found its range from.
    for at in 0..refs.len() {
        if !refs[at].tag {
            continue;
        }
        let same = refs
            .iter()
            .find(|other| !other.tag && other.commit == refs[at].commit)
            .map(|other| other.selection.clone());
        if let Some(selection) = same {
            refs[at].selection = selection;
        }
    }
    let tips: Vec<String> = refs.iter().map(|r| r.commit.clone()).collect();
    let below = older(&tips, &tags);
    let mut left = Vec::new();
    refs.retain(|r| {
        let keep = !(r.tag && below.contains(&r.commit));
        if !keep {
            left.push(r.name.clone());
        }
        keep
    });
    (refs, left)
}

/// What a report calls a pushed ref: its local name, or, when it makes a
/// ref of another name on the remote, the refspec as a person types it
/// (`HEAD:refs/heads/x`, `main:refs/heads/release`): `HEAD` or a commit's
/// id alone does not say what the push makes.
fn pushed_name(local_ref: &str, remote_ref: &str) -> String {
    if local_ref == remote_ref {
        local_ref.to_string()
    } else {
        format!("{local_ref}:{remote_ref}")
    }
}

/// `origin`, or `origin` and `fork`, as a note names remotes.
fn listed(names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    crate::prose::and_list(&names)
}

/// A commit's id as reports show it, its first ten characters.
fn short(id: &str) -> &str {
    id.get(..10).unwrap_or(id)
}

/// The commits a pushed ref's files are counted from (none for every file
/// of a commit), and the one it ends at.
type Checks = (Vec<String>, String);

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
        SelectionRequest::Range { from, to } => Some((vec![commit(from)?], commit(to)?)),
        SelectionRequest::Pushed { to, published } => Some((published.clone(), commit(to)?)),
        SelectionRequest::AllOf(spec) => Some((Vec::new(), commit(spec)?)),
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
/// commits share history (see `git::share_history`), which commit a name
/// stands for, and which commits are older than others.
struct Pushed<'a> {
    /// The remote pushed to, as git names it to the hook (its name, or
    /// the URL).
    remote: &'a str,
    kind: &'a dyn Fn(&str) -> Option<&'static str>,
    base: &'a dyn Fn(&str) -> Option<PushedBase>,
    related: &'a dyn Fn(&str, &str) -> bool,
    /// The full id of the commit a name stands for (see `git::commit_id`).
    commit: &'a dyn Fn(&str) -> Option<String>,
    /// Which of the commits given second are in the history of those
    /// given first (see `git::ancestors_among`).
    older: &'a Older<'a>,
    /// Which of the commits given were published already, and by which
    /// remotes when not the one pushed to (see `git::published_among`).
    published: &'a Published<'a>,
    /// The published commits that the commits of a pushed commit new to
    /// the remote were made on, given a commit the remote has (see
    /// `git::published_parents`).
    made_on: &'a MadeOn<'a>,
}

/// See `Pushed::made_on`.
type MadeOn<'a> = dyn Fn(&str, Option<&str>) -> Option<Vec<String>> + 'a;

/// See `Pushed::older`.
type Older<'a> = dyn Fn(&[String], &[String]) -> std::collections::HashSet<String> + 'a;

/// See `Pushed::published`.
type Published<'a> =
    dyn Fn(&[String]) -> Option<(std::collections::HashSet<String>, Vec<String>)> + 'a;

#[cfg(test)]
mod tests {
    use super::*;

    /// What the hook asks, answered by the closures given.
    fn ranges(
        input: &str,
        kind: impl Fn(&str) -> Option<&'static str>,
        base: impl Fn(&str) -> Option<String>,
        related: impl Fn(&str, &str) -> bool,
    ) -> PushRead {
        read_with(input.as_bytes(), kind, base, related).unwrap_or_else(|e| panic!("{e}"))
    }

    /// What the hook reads from `input` when every object is a commit,
    /// none was published and all share history.
    fn read(input: &[u8]) -> Result<PushRead, Unreadable> {
        read_with(input, |_| Some("commit"), |_| None, |_, _| true)
    }

    /// What the hook reads from `input`, its questions answered by the
    /// closures given.
    fn read_with(
        input: &[u8],
        kind: impl Fn(&str) -> Option<&'static str>,
        base: impl Fn(&str) -> Option<String>,
        related: impl Fn(&str, &str) -> bool,
    ) -> Result<PushRead, Unreadable> {
        let base = |oid: &str| {
            base(oid).map(|from| PushedBase {
                from,
                others: Vec::new(),
            })
        };
        let pushed = Pushed {
            remote: "origin",
            kind: &kind,
            base: &base,
            related: &related,
            commit: &|_: &str| None,
            older: &|_: &[String], _: &[String]| std::collections::HashSet::new(),
            published: &|_: &[String]| None,
            made_on: &|_: &str, _: Option<&str>| None,
        };
        pushed_ranges(input, &pushed)
    }

    #[test]
    fn a_stopped_push_is_told_to_commit_its_fixes_and_a_commit_to_stage_them() {
        let push = stopped("pre-push", ExitCode::Failed, &[]).unwrap_or_default();
        assert!(push.contains("commit the fixes"), "{push}");
        assert!(!push.contains("git add"), "{push}");
        let commit = stopped("pre-commit", ExitCode::Failed, &[]).unwrap_or_default();
        assert!(commit.contains("`git add` the fixes"), "{commit}");
        assert_eq!(stopped("pre-push", ExitCode::Proceed, &[]), None);
    }

    #[test]
    fn a_stopped_push_names_the_refs_it_stopped_for_and_the_command_that_skips_the_gate() {
        let refused = ["refs/heads/main".to_string(), "refs/tags/v1".to_string()];
        let push = stopped("pre-push", ExitCode::Failed, &refused).unwrap_or_default();
        assert!(
            push.starts_with(
                "phasegate stopped the push for `refs/heads/main`, `refs/tags/v1` (the pre-push hook)"
            ),
            "{push}"
        );
        assert!(
            push.contains("`git push --no-verify` skips the gate"),
            "{push}"
        );
        let commit = stopped("pre-commit", ExitCode::Failed, &[]).unwrap_or_default();
        assert!(
            commit.contains("`git commit --no-verify` skips the gate"),
            "{commit}"
        );
    }

    #[test]
    fn a_tag_below_another_pushed_ref_is_left_to_it_and_a_branch_never_is() {
        let (a, b, c, x) = (
            "a".repeat(40),
            "b".repeat(40),
            "c".repeat(40),
            "e".repeat(40),
        );
        let pushed = |name: &str, commit: &str, tag: bool| PushedRef {
            selection: SelectionRequest::AllOf(commit.to_string()),
            name: name.to_string(),
            commit: commit.to_string(),
            tag,
        };
        let mut main = pushed("refs/heads/main", &a, false);
        main.selection = SelectionRequest::Range {
            from: x.clone(),
            to: a.clone(),
        };
        let refs = vec![
            main,
            pushed("refs/tags/v2", &a, true),
            pushed("refs/tags/v1", &b, true),
            pushed("refs/heads/old", &b, false),
            pushed("refs/tags/rc", &c, true),
        ];
        // `b` is in `a`'s history; `c` in none.
        let older =
            |_: &[String], among: &[String]| among.iter().filter(|id| **id == b).cloned().collect();
        let (kept, left) = tags_left_to_other_refs(refs, &older);
        let named: Vec<&str> = kept.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            named,
            [
                "refs/heads/main",
                "refs/tags/v2",
                "refs/heads/old",
                "refs/tags/rc"
            ]
        );
        assert_eq!(left, ["refs/tags/v1"]);
        // The tag on `main`'s commit is checked as `main` is, in its run.
        assert!(
            matches!(&kept[1].selection, SelectionRequest::Range { from, to } if *from == x && *to == a)
        );
        let many: Vec<String> = (0..12).map(|n| format!("refs/tags/v{n}")).collect();
        assert!(names_of(&many).ends_with("`refs/tags/v9` and 2 more"));
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
        assert_eq!(
            notes,
            ["`refs/heads/x` is deleted on the remote by this push: nothing is checked for it"]
        );
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
        let (selections, notes) = read(&input).unwrap_or_else(|e| panic!("{e}"));
        let named: Vec<&str> = selections
            .iter()
            .filter_map(|(_, r)| r.as_deref())
            .collect();
        assert_eq!(named, ["refs/heads/caf\\xe9:refs/heads/x", "refs/heads/y"]);
        assert!(
            notes[0].contains("`refs/notes/commits` holds notes"),
            "{notes:?}"
        );
    }

    #[test]
    fn a_line_git_did_not_write_stops_the_push_naming_the_line() {
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let read = |input: String| read(input.as_bytes()).map(|(s, _)| s.len());
        let good = format!("refs/heads/x {a} refs/heads/x {b}\n");
        // Blank lines say nothing and are passed over.
        assert_eq!(read(format!("\n{good}  \n")), Ok(1));
        for bad in [
            "refs/heads/y".to_string(),
            format!("refs/heads/y {a} refs/heads/y"),
            format!("refs/heads/y {a} refs/heads/y {b} extra"),
            "refs/heads/y abc refs/heads/y def".to_string(),
            format!("refs/heads/y {a} refs/heads/y {}", "g".repeat(40)),
        ] {
            assert_eq!(
                read(format!("{good}{bad}\n{good}")),
                Err(Unreadable::Line(2, bad.clone())),
                "{bad}"
            );
        }
        let long = Unreadable::Line(7, "x".repeat(1000)).to_string();
        assert!(long.starts_with("line 7 of the pushed refs"), "{long}");
        assert!(long.len() < 400, "{long}");
    }

    #[test]
    fn a_stopped_tag_is_told_to_move_the_tag_onto_the_fixes() {
        let one = [
            "refs/heads/main".to_string(),
            "HEAD:refs/tags/v1".to_string(),
        ];
        let push = stopped("pre-push", ExitCode::Failed, &one).unwrap_or_default();
        assert!(push.contains("`git tag -f v1`"), "{push}");
        let two = ["refs/tags/v1".to_string(), "refs/tags/v2".to_string()];
        let push = stopped("pre-push", ExitCode::Failed, &two).unwrap_or_default();
        assert!(push.contains("move the tags onto that commit"), "{push}");
        let branch = ["refs/heads/main".to_string()];
        let push = stopped("pre-push", ExitCode::Failed, &branch).unwrap_or_default();
        assert!(!push.contains("git tag"), "{push}");
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
