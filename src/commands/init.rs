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
    let path = root.join("phasegate.toml");
    if path.exists() && !args.force {
        let _ = writeln!(
            io.err,
            "error: `{}` already exists\nhelp: run `phasegate init --force` to replace it",
            path.display()
        );
        return ExitCode::Usage;
    }
    let text = config::init_template(&root);
    if let Err(e) = std::fs::write(&path, text) {
        let _ = writeln!(io.err, "error: failed to write `{}`: {e}", path.display());
        return ExitCode::Incomplete;
    }
    // The personal override must never be committed by accident.
    if let Err(e) = ignore_local_file(&root) {
        let _ = writeln!(
            io.err,
            "warning: failed to add `{}` to .gitignore: {e}",
            config::LOCAL_FILE
        );
    }
    let language = config::detect_language(&root)
        .map_or_else(|| "no known language".to_string(), |l| l.name().to_string());
    let _ = writeln!(
        io.out,
        "wrote {} ({language}); run `phasegate run` to try it",
        path.display()
    );
    ExitCode::Proceed
}

/// Adds `phasegate.local.toml` to the root `.gitignore` unless a line
/// already names it.
fn ignore_local_file(root: &std::path::Path) -> std::io::Result<()> {
    let path = root.join(".gitignore");
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
        return Ok(());
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("/{name}\n"));
    std::fs::write(path, text)
}
