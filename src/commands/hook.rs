//! `phasegate hook <name>`: what an installed git hook calls. pre-commit
//! checks the staged content; pre-push checks what is being pushed.

use std::io::BufRead;

use crate::cli::HookArgs;
use crate::context::Context;
use crate::exit::ExitCode;

use super::run::{execute, RunRequest, SelectionRequest};
use super::Streams;

/// An object id of zeros: a ref that does not exist on one side of a push.
fn is_zero(oid: &str) -> bool {
    !oid.is_empty() && oid.bytes().all(|b| b == b'0')
}

pub fn run(ctx: &Context, args: &HookArgs, io: &mut Streams<'_>) -> ExitCode {
    let selection = match args.name.as_str() {
        "pre-commit" => SelectionRequest::Staged,
        "pre-push" => match pushed_range(std::io::stdin().lock()) {
            Some(selection) => selection,
            // Only deletions are pushed: there is nothing to check.
            None => return ExitCode::Proceed,
        },
        other => {
            let _ = writeln!(
                io.err,
                "error: phasegate has no `{other}` hook\nhelp: the hooks are `pre-commit` and `pre-push`"
            );
            return ExitCode::Usage;
        }
    };
    let request = RunRequest {
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
    };
    execute(ctx, &request, io)
}

/// The range a pre-push hook checks, from the lines git writes on its
/// standard input: `<local ref> <local oid> <remote ref> <remote oid>`. A
/// new branch (no remote oid) checks every tracked file.
fn pushed_range(input: impl BufRead) -> Option<SelectionRequest> {
    let mut selection = None;
    for line in input.lines().map_while(Result::ok) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, local, _, remote] = fields.as_slice() else {
            continue;
        };
        if is_zero(local) {
            continue;
        }
        if is_zero(remote) {
            return Some(SelectionRequest::All);
        }
        selection.get_or_insert(SelectionRequest::Range {
            from: (*remote).to_string(),
            to: (*local).to_string(),
        });
    }
    selection
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushed_ranges() {
        let zero = "0".repeat(40);
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let line = |l: &str, r: &str| format!("refs/heads/x {l} refs/heads/x {r}\n");
        assert!(matches!(
            pushed_range(line(&a, &b).as_bytes()),
            Some(SelectionRequest::Range { from, to }) if from == b && to == a
        ));
        assert!(matches!(
            pushed_range(line(&a, &zero).as_bytes()),
            Some(SelectionRequest::All)
        ));
        assert!(pushed_range(line(&zero, &b).as_bytes()).is_none());
        assert!(pushed_range(&b""[..]).is_none());
    }
}
