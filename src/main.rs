//! The `phasegate` binary: parse the arguments, run, exit.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = match phasegate::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are successful exits; everything else is a
            // usage error, exit 2 like any other.
            if !e.use_stderr() {
                let _ = e.print();
                return phasegate::exit::ExitCode::Proceed.into();
            }
            let args: Vec<String> = std::env::args().skip(1).collect();
            return phasegate::usage_failure(&args, &e.render().to_string(), || {
                let _ = e.print();
            })
            .into();
        }
    };
    phasegate::run(&cli).into()
}
