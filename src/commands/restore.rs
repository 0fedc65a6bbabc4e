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
    let state = repo.work_tree_state();
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
        Ok(recovered) if recovered.is_empty() => {
            let _ = writeln!(io.out, "nothing to restore");
            ExitCode::Proceed
        }
        Ok(recovered) => {
            let _ = writeln!(io.out, "restored the unstaged changes of:");
            for path in &recovered.restored {
                let _ = writeln!(io.out, "  {path}");
            }
            if let Some(dir) = &recovered.kept_in {
                let _ = writeln!(
                    io.out,
                    "these changed after the run was killed; the versions they held are kept in {}:",
                    dir.display()
                );
                for path in &recovered.kept {
                    let _ = writeln!(io.out, "  {path}");
                }
            }
            ExitCode::Proceed
        }
        Err(e) => {
            let _ = writeln!(io.err, "error: {}", super::internal_error(&e).message);
            ExitCode::Incomplete
        }
    }
}
