//! The `phasegate` binary: parse the arguments, run, exit.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = match phasegate::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are successful exits; everything else is a
            // usage error, exit 2 like any other.
            let code = if e.use_stderr() {
                phasegate::exit::ExitCode::Usage
            } else {
                phasegate::exit::ExitCode::Proceed
            };
            let _ = e.print();
            return code.into();
        }
    };
    phasegate::run(&cli).into()
}
