//! `phasegate restore`: finish a killed run by writing back the unstaged
//! changes it had set aside.

use crate::context::Context;
use crate::exit::ExitCode;

use super::Streams;

pub fn run(ctx: &Context, io: &mut Streams<'_>) -> ExitCode {
    let repo = match crate::git::discover(&ctx.cwd) {
        Ok(Some(repo)) => repo,
        Ok(None) => {
            let _ = writeln!(io.err, "error: not inside a git repository");
            return ExitCode::Usage;
        }
        Err(e) => {
            let _ = writeln!(io.err, "error: {e}");
            return ExitCode::Usage;
        }
    };
    // A Ctrl-C never stops a restore half way: it finishes, and is said.
    let interrupts = crate::runner::InterruptGuard::install();
    let state = crate::state::StateDir::new(repo.work_tree_state(), repo.sharing);
    let pause = |step: &str| ctx.maybe_pause(step, &state);
    let recovered = crate::git::recover(&repo.root, &state, &pause);
    drop(interrupts);
    if crate::runner::interrupted() {
        let _ = writeln!(
            io.err,
            "phasegate: interrupted; the restore was finished first"
        );
    }
    match recovered {
        Ok(recovered) => {
            let _ = crate::report::state::restored_human(&recovered, io.out);
            ExitCode::Proceed
        }
        Err(e) => {
            let _ = writeln!(io.err, "error: {}", super::internal_error(&e).message);
            ExitCode::Incomplete
        }
    }
}
