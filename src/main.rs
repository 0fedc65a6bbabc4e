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
            // A file name need not be UTF-8 (`--files` takes any path),
            // and `std::env::args` panics on one that is not.
            let args: Vec<String> = std::env::args_os()
                .skip(1)
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect();
            return phasegate::usage_failure(&args, &e.render().to_string(), || {
                let _ = e.print();
            })
            .into();
        }
    };
    phasegate::run(&cli).into()
}
