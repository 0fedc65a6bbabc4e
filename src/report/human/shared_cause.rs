//! One cause shared by several checks, said once: programs that the
//! project's dependencies bring, missing because they were never
//! installed (a fresh clone before `npm install` or `poetry install`).
//! Each check's finding says the same cause and the same advice; the
//! human report names each check's program in its section and says the
//! rest once. Reads the findings as the gate wrote them and decides
//! nothing: a finding it does not recognise reads as it always did.

use std::io::{self, Write};

use crate::diagnostics::{summary_line, Diagnostic, OwnCode};
use crate::gate::{CheckStatus, Effect, Verdict};
use crate::prose::and_list;

use super::{clean, Paint};

/// The ways out a missing program's finding offers besides installing
/// it, which depend on the profile and on whether `phasegate.toml` lists
/// the check.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ways {
    /// The check is phasegate's default: list it in `phasegate.toml`
    /// with `on_missing`, or leave it out there.
    Default,
    /// `phasegate.toml` lists it: take it out, or set its `on_missing`.
    Listed,
    /// The strict profile reads no `on_missing`: take it out.
    Strict,
}

/// A check's program that the project's dependencies bring, as its
/// missing-tool finding says it.
#[derive(Debug)]
struct Missing<'a> {
    d: &'a Diagnostic,
    program: &'a str,
    /// The package that brings it, where that is another name
    /// (`typescript` for `tsc`).
    package: Option<&'a str>,
    /// The command that installs the project's dependencies.
    installer: &'a str,
    /// Where it was looked for: `not found on PATH`, `not found in the
    /// environment poetry keeps for the project`.
    looked: &'a str,
    ways: Ways,
}

/// The checks whose programs one command installs.
#[derive(Debug)]
pub(super) struct SharedCause<'a> {
    members: Vec<Missing<'a>>,
}

impl SharedCause<'_> {
    /// Whether check `name` is one of them.
    pub(super) fn has(&self, name: &str) -> bool {
        self.members.iter().any(|m| m.d.check == name)
    }

    /// How many checks share it.
    pub(super) fn len(&self) -> usize {
        self.members.len()
    }

    /// The names of its checks, in the report's order.
    fn checks(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| clean(&m.d.check).into_owned())
            .collect()
    }
}

/// The shared causes among the checks the report details: programs of at
/// least two missing checks that the same command installs, looked for in
/// the same place, with the same other ways out. A check whose finding
/// says anything else (a single missing program, another advice, a
/// program the project's virtual environment has) is in none.
pub(super) fn shared_causes(verdict: &Verdict) -> Vec<SharedCause<'_>> {
    let mut causes: Vec<SharedCause<'_>> = Vec::new();
    for check in &verdict.checks {
        if check.status != CheckStatus::Missing || check.effect == Effect::None {
            continue;
        }
        let mut findings = verdict.diagnostics.iter().filter(|d| d.check == check.name);
        let (Some(d), None) = (findings.next(), findings.next()) else {
            continue;
        };
        let Some(missing) = read(d) else {
            continue;
        };
        // Its reason, on the check's status line, is the finding's.
        if check.reason.as_deref() != Some(reason(missing.program, missing.looked).as_str()) {
            continue;
        }
        let alike = |other: &Missing<'_>| {
            other.installer == missing.installer
                && other.looked == missing.looked
                && other.ways == missing.ways
        };
        match causes.iter_mut().find(|c| alike(&c.members[0])) {
            Some(cause) => cause.members.push(missing),
            None => causes.push(SharedCause {
                members: vec![missing],
            }),
        }
    }
    causes.retain(|c| c.members.len() > 1);
    causes
}

/// A missing program's reason, as the gate words it.
fn reason(program: &str, looked: &str) -> String {
    format!("`{program}` is not installed ({looked})")
}

/// What `d` says, when it is a missing program of the project's
/// dependencies: `<reason>; <advice>`, the advice in one of the three
/// forms of `Ways`, each naming the check.
fn read(d: &Diagnostic) -> Option<Missing<'_>> {
    if d.tool != "phasegate"
        || d.code.as_deref() != Some(OwnCode::MissingTool.as_str())
        || d.check.is_empty()
        || d.message.contains('\n')
    {
        return None;
    }
    let (said, advice) = d.message.split_once("; ")?;
    let (program, looked) = said.strip_prefix('`')?.split_once("` is not installed (")?;
    let looked = looked.strip_suffix(')')?;
    let check = &d.check;
    let (install, ways) = if let Some(rest) = advice.strip_prefix(&format!(
        "take check `{check}` out of its phase's `checks` if the project does not use it; else "
    )) {
        let install = rest.strip_suffix(&format!(
            ", or set `on_missing` for check `{check}` to \"warn\" or \"skip\""
        ))?;
        (install, Ways::Listed)
    } else if let Some(install) = advice.strip_suffix(&format!(
        ", or take check `{check}` out of its phase's `checks` (the strict profile blocks on every missing tool)"
    )) {
        (install, Ways::Strict)
    } else {
        let install = advice.strip_suffix(&format!(
            ", or list check `{check}` with `on_missing = \"warn\"` (or \"skip\") in a phase of `phasegate.toml` (`phasegate init` writes one where there is none), or leave it out of the phase there"
        ))?;
        (install, Ways::Default)
    };
    let (installer, package) = install
        .strip_prefix("install the project's dependencies (`")?
        .split_once("`), or add ")?;
    let package = package.strip_suffix(" to them")?;
    let package = match package {
        "it" => None,
        named => Some(
            named
                .strip_prefix('`')
                .and_then(|p| p.strip_suffix('`'))
                .unwrap_or(named),
        ),
    };
    Some(Missing {
        d,
        program,
        package,
        installer,
        looked,
        ways,
    })
}

/// The line a check's section shows for its finding: its place in
/// `phasegate.toml`, and its program; what to do is said once, below.
pub(super) fn finding_line(
    cause: &SharedCause<'_>,
    check: &str,
    out: &mut dyn Write,
    p: &Paint,
) -> io::Result<()> {
    let Some(m) = cause.members.iter().find(|m| m.d.check == check) else {
        return Ok(());
    };
    let first = format!(
        "`{}` is not installed {}",
        clean(m.program),
        p.dim("(one of the project's dependencies: what to do is below)")
    );
    super::head_line(m.d, first, out, p)
}

/// The block that says once what the checks of `cause` share: their
/// programs, the command that installs them, and the other ways out.
pub(super) fn block(cause: &SharedCause<'_>, out: &mut dyn Write, p: &Paint) -> io::Result<()> {
    let first = &cause.members[0];
    let checks = cause.checks();
    let quoted: Vec<String> = checks.iter().map(|c| format!("`{c}`")).collect();
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        p.bold(&format!(
            "{} — the project's dependencies are not installed",
            checks.join(", ")
        ))
    )?;
    let programs: Vec<String> = cause
        .members
        .iter()
        .map(|m| format!("`{}` (check `{}`)", clean(m.program), clean(&m.d.check)))
        .collect();
    writeln!(
        out,
        "  {} are not installed ({})",
        and_list(&programs),
        clean(first.looked)
    )?;
    let packages: Vec<String> = cause
        .members
        .iter()
        .filter_map(|m| {
            m.package
                .map(|package| format!("`{}` comes in `{}`", clean(m.program), clean(package)))
        })
        .collect();
    let packages = if packages.is_empty() {
        String::new()
    } else {
        format!(" ({})", packages.join(", "))
    };
    writeln!(
        out,
        "  install the project's dependencies (`{}`), or add to them a program they lack{packages}",
        clean(first.installer)
    )?;
    let checks = and_list(&quoted);
    let others = match first.ways {
        Ways::Default => format!(
            "or list checks {checks} with `on_missing = \"warn\"` (or \"skip\") in a phase of `phasegate.toml` (`phasegate init` writes one where there is none), or leave them out of the phase there"
        ),
        Ways::Listed => format!(
            "or take the check of a program the project does not use out of its phase's `checks`, or set `on_missing` for checks {checks} to \"warn\" or \"skip\""
        ),
        Ways::Strict => format!(
            "or take checks {checks} out of their phase's `checks` (the strict profile blocks on every missing tool)"
        ),
    };
    writeln!(out, "  {others}")
}

/// The summary's lines as the report shows them: the lines of a shared
/// cause's findings give way to one line that names them all, where the
/// first of them stood.
pub(super) fn summary(verdict: &Verdict, causes: &[SharedCause<'_>]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut said = vec![false; causes.len()];
    let own: Vec<(usize, String)> = causes
        .iter()
        .enumerate()
        .flat_map(|(i, cause)| cause.members.iter().map(move |m| (i, summary_line(m.d))))
        .collect();
    for line in &verdict.summary {
        let Some((i, _)) = own.iter().find(|(_, own)| own == line) else {
            lines.push(line.clone());
            continue;
        };
        if !said[*i] {
            said[*i] = true;
            lines.push(summary_entry(&causes[*i]));
        }
    }
    lines
}

/// A shared cause's one summary line, as the summary writes a finding:
/// `code message (checks)`.
fn summary_entry(cause: &SharedCause<'_>) -> String {
    let first = &cause.members[0];
    let mut programs: Vec<String> = Vec::new();
    for m in &cause.members {
        let program = format!("`{}`", m.program);
        if !programs.contains(&program) {
            programs.push(program);
        }
    }
    format!(
        "{} {} are not installed ({}); install the project's dependencies (`{}`) ({})",
        OwnCode::MissingTool.as_str(),
        and_list(&programs),
        first.looked,
        first.installer,
        cause.checks().join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(check: &str, message: &str) -> Diagnostic {
        Diagnostic {
            check: check.into(),
            tool: "phasegate".into(),
            code: Some(OwnCode::MissingTool.as_str().into()),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn each_form_of_a_missing_dependency_is_read() {
        let listed = finding(
            "build",
            "`tsc` is not installed (not found on PATH); take check `build` out of its phase's `checks` if the project does not use it; else install the project's dependencies (`npm install`), or add `typescript` to them, or set `on_missing` for check `build` to \"warn\" or \"skip\"",
        );
        let m = read(&listed).expect("the listed form");
        assert_eq!(
            (m.program, m.package, m.installer, m.looked, m.ways),
            (
                "tsc",
                Some("typescript"),
                "npm install",
                "not found on PATH",
                Ways::Listed
            )
        );
        let strict = finding(
            "tests",
            "`pytest` is not installed (not found in the environment poetry keeps for the project); install the project's dependencies (`poetry install`), or add it to them, or take check `tests` out of its phase's `checks` (the strict profile blocks on every missing tool)",
        );
        let m = read(&strict).expect("the strict form");
        assert_eq!(
            (m.package, m.installer, m.ways),
            (None, "poetry install", Ways::Strict)
        );
    }

    #[test]
    fn a_finding_of_another_advice_or_another_check_is_not_read() {
        // Another check's name in the advice, a tool's own install hint,
        // and a program the project's environment has.
        for (check, message) in [
            ("lint", "`eslint` is not installed (not found on PATH); install the project's dependencies (`npm install`), or add it to them, or take check `tests` out of its phase's `checks` (the strict profile blocks on every missing tool)"),
            ("docs", "`markdownlint` is not installed (not found on PATH); take check `docs` out of its phase's `checks` if the project does not use it; else install it, or set `on_missing` for check `docs` to \"warn\" or \"skip\""),
            ("tests", "`pytest` is not on PATH, but the project's virtual environment `.venv` has it (`.venv/bin/pytest`): the check did not run in it; deactivate that environment"),
        ] {
            assert!(read(&finding(check, message)).is_none(), "{message}");
        }
    }
}
