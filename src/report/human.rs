//! The human report: one line per check, the failing checks' diagnostics or
//! output tail, the summary, and a final verdict line. Colour only when the
//! caller says the stream is a terminal and `NO_COLOR` is unset.

use std::io::{self, Write};

use crate::diagnostics::{
    code_apart, shorten, Diagnostic, Severity, MAX_DIAGNOSTICS_PER_CHECK, MAX_LINE_CHARS,
};
use crate::gate::{
    format_duration, CheckResult, CheckStatus, Effect, SelectionSummary, Status, Verdict,
};

// Every text that came from outside (a tool's output, a file name, the
// configuration, a handoff document) goes through `clean` before it is
// written: a terminal obeys the control characters in it.
use super::text::line as clean;

mod shared_cause;
use shared_cause::SharedCause;

/// How many diagnostics are printed per check before "and N more".
const MAX_PER_CHECK: usize = 20;

/// How many lines of a diagnostic's message are printed under its first:
/// a test's failure or a verifier's finding can run to thousands, and the
/// report must still show the diagnostics after it. A failed check's
/// output tail (its heading and 20 lines) fits whole.
const MAX_MESSAGE_LINES: usize = 30;

/// Check names are aligned up to this many terminal columns: a longer name
/// runs past the status column on its own line, instead of pushing every
/// line's status off the terminal's edge.
const MAX_NAME_COLUMNS: usize = 40;

/// The terminal columns `text` takes (a wide character takes two).
fn columns(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

struct Paint {
    color: bool,
}

impl Paint {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_string()
        }
    }
    fn red(&self, t: &str) -> String {
        self.paint("31", t)
    }
    fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    fn yellow(&self, t: &str) -> String {
        self.paint("33", t)
    }
    fn dim(&self, t: &str) -> String {
        self.paint("2", t)
    }
    fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
}

/// Writes the report for `verdict`.
pub fn render(verdict: &Verdict, out: &mut dyn Write, color: bool) -> io::Result<()> {
    let p = Paint { color };
    if let Some(error) = &verdict.error {
        // Configuration errors were drawn by miette, with their spans, just
        // before this; the others are one line.
        if error.kind != "config" {
            writeln!(out, "{} {}", p.red("error:"), clean(&error.message))?;
        }
        return verdict_line(verdict, out, &p);
    }
    heading(verdict, out, &p)?;
    let width = verdict
        .checks
        .iter()
        .map(|c| columns(&clean(&c.name)))
        .max()
        .unwrap_or(0)
        .min(MAX_NAME_COLUMNS);
    for check in &verdict.checks {
        check_line(check, width, out, &p)?;
    }
    let causes = shared_cause::shared_causes(verdict);
    check_details(verdict, &causes, out, &p)?;
    gate_findings(verdict, out, &p)?;
    if !verdict.notes.is_empty() {
        writeln!(out)?;
        for note in &verdict.notes {
            writeln!(out, "{} {}", p.yellow("note:"), clean(note))?;
        }
    }
    if !verdict.summary.is_empty() && verdict.status != Status::Passed {
        writeln!(out)?;
        writeln!(out, "{}", p.bold("summary"))?;
        for line in &shared_cause::summary(verdict, &causes) {
            writeln!(out, "  {}", clean(&shorten(line, MAX_LINE_CHARS)))?;
        }
    }
    writeln!(out)?;
    verdict_line(verdict, out, &p)
}

/// The phase, profile and workflow, and which files or commits were
/// checked.
fn heading(verdict: &Verdict, out: &mut dyn Write, p: &Paint) -> io::Result<()> {
    let phase = clean(verdict.phase.as_deref().unwrap_or("?"));
    let mut heading = format!(
        "phasegate · phase {phase} · profile {}",
        verdict.profile.as_str()
    );
    if let Some(workflow) = &verdict.workflow {
        heading.push_str(&format!(" · workflow {}", clean(workflow)));
    }
    writeln!(out, "{}", p.bold(&heading))?;
    if let Some(line) = verdict.selection.as_ref().and_then(selection_line) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Each check that did not pass cleanly, failing ones first, then
/// warnings, then checks that passed but found something (clippy's
/// warnings under exit 0): why, its most important diagnostics, and where
/// its log is. A cause several checks share (`causes`) is said once, after
/// the last of their sections.
fn check_details(
    verdict: &Verdict,
    causes: &[SharedCause<'_>],
    out: &mut dyn Write,
    p: &Paint,
) -> io::Result<()> {
    let findings = |check: &CheckResult| {
        verdict
            .diagnostics
            .iter()
            .filter(|d| {
                d.check == check.name && matches!(d.severity, Severity::Error | Severity::Warning)
            })
            .count()
    };
    let mut detailed: Vec<&CheckResult> = verdict
        .checks
        .iter()
        .filter(|c| {
            c.effect != Effect::None || (c.status == CheckStatus::Passed && findings(c) > 0)
        })
        .collect();
    detailed.sort_by_key(|c| match c.effect {
        Effect::Block => 0,
        Effect::Incomplete => 1,
        Effect::None => 3,
        _ => 2,
    });
    // The findings shown so far, with the check they were shown under: a
    // compiler's error or warning that `cargo test`, `cargo clippy`,
    // `cargo build` and `cargo check` (or `go test`, `go build`) each
    // print is shown in full once, and named again in one line.
    let mut shown: Vec<(&Diagnostic, &str)> = Vec::new();
    // Passing checks that found nothing but what is shown above: one line
    // names them all.
    let mut passed_with_repeats: Vec<&str> = Vec::new();
    // How many checks of each shared cause have had their section.
    let mut told = vec![0usize; causes.len()];
    for check in detailed {
        let mut diagnostics: Vec<&Diagnostic> = verdict
            .diagnostics
            .iter()
            .filter(|d| d.check == check.name)
            .collect();
        if check.status == CheckStatus::Passed
            && check.effect == Effect::None
            && check.dropped_diagnostics == 0
            && diagnostics.iter().all(|d| shown_under(d, &shown).is_some())
        {
            passed_with_repeats.push(&check.name);
            continue;
        }
        writeln!(out)?;
        // A reason a diagnostic below says again, with more (a missing
        // tool's advice, a timed-out check's last output), is not said a
        // third time after the check line.
        let said_below = |reason: &str| {
            diagnostics
                .iter()
                .any(|d| d.message.contains(reason) && d.message.len() > reason.len())
        };
        let title = match &check.reason {
            Some(reason) if said_below(reason) => {
                format!("{} — {}", clean(&check.name), check.status.as_str())
            }
            Some(reason) => format!("{} — {}", clean(&check.name), clean(reason)),
            None if check.status == CheckStatus::Passed => format!(
                "{} — passed, with {} finding(s) that do not fail it",
                clean(&check.name),
                findings(check)
            ),
            None => clean(&check.name).into_owned(),
        };
        writeln!(out, "{}", p.bold(&title))?;
        if let Some(at) = causes.iter().position(|c| c.has(&check.name)) {
            shared_cause::finding_line(&causes[at], &check.name, out, p)?;
            if let Some(log) = &check.log {
                writeln!(out, "  {}", p.dim(&format!("full log: {}", clean(log))))?;
            }
            told[at] += 1;
            if told[at] == causes[at].len() {
                shared_cause::block(&causes[at], out, p)?;
            }
            continue;
        }
        by_importance(&mut diagnostics);
        if check.status == CheckStatus::Passed && check.effect == Effect::None {
            // Findings that fail nothing (clippy's warnings under exit 0)
            // come back on every commit: one line each, and the log has
            // them whole.
            short_lines(&diagnostics, &shown, out, p)?;
        } else {
            diagnostic_lines(&diagnostics, &shown, out, p)?;
        }
        for d in diagnostics.iter().take(MAX_PER_CHECK) {
            if shown_under(d, &shown).is_none() {
                shown.push((*d, &check.name));
            }
        }
        if check.dropped_diagnostics > 0 {
            writeln!(out, "  {}", not_kept(check.dropped_diagnostics))?;
        }
        if let Some(log) = &check.log {
            writeln!(out, "  {}", p.dim(&format!("full log: {}", clean(log))))?;
        }
    }
    if !passed_with_repeats.is_empty() {
        writeln!(out)?;
        let names: Vec<String> = passed_with_repeats
            .iter()
            .map(|name| clean(name).into_owned())
            .collect();
        writeln!(
            out,
            "{}",
            p.bold(&format!(
                "{} — passed, with only findings shown above, which do not fail {}",
                names.join(", "),
                if names.len() == 1 { "it" } else { "them" }
            ))
        )?;
    }
    Ok(())
}

/// The check an earlier section of the report showed `d` under: the same
/// finding (place, severity, code, test and message) of another check.
/// phasegate's own findings for output nobody parsed are each check's own.
fn shown_under<'a>(d: &Diagnostic, shown: &[(&Diagnostic, &'a str)]) -> Option<&'a str> {
    if d.is_output_tail() {
        return None;
    }
    shown
        .iter()
        .find(|(earlier, check)| {
            *check != d.check
                && earlier.file == d.file
                && earlier.line == d.line
                && earlier.column == d.column
                && earlier.severity == d.severity
                && earlier.code == d.code
                && earlier.test == d.test
                && earlier.message == d.message
        })
        .map(|(_, check)| *check)
}

/// A finding shown in full under an earlier check: its first line, and
/// which check it is under.
fn repeat_line(d: &Diagnostic, under: &str, out: &mut dyn Write, p: &Paint) -> io::Result<()> {
    let first = clean(&shorten(&super::text::first_line(d), MAX_LINE_CHARS)).into_owned();
    let first = format!(
        "{first} {}",
        p.dim(&format!("(as under `{}` above)", clean(under)))
    );
    head_line(d, first, out, p)
}

/// The first diagnostics, and how many more there are.
fn diagnostic_lines(
    diagnostics: &[&Diagnostic],
    shown: &[(&Diagnostic, &str)],
    out: &mut dyn Write,
    p: &Paint,
) -> io::Result<()> {
    for d in diagnostics.iter().take(MAX_PER_CHECK) {
        if let Some(under) = shown_under(d, shown) {
            repeat_line(d, under, out, p)?;
        } else if d.is_output_tail() && tail_repeats(d, diagnostics) {
            tail_headline(d, out, p)?;
        } else {
            diagnostic_line(d, out, p)?;
        }
    }
    if diagnostics.len() > MAX_PER_CHECK {
        writeln!(out, "  … and {} more", diagnostics.len() - MAX_PER_CHECK)?;
    }
    Ok(())
}

/// Whether the output tail `tail` (phasegate's finding for a failure no
/// parsed error explains) only says again what its check's other findings
/// say: the warnings of a check that failed on warnings alone (a wrapper
/// that fails on any warning, `eslint --max-warnings 0`), with their
/// snippets and counts. Its headline already carries the output's telling
/// line. A tail with a line no finding accounts for (an error nobody
/// parsed: a linker's, a crash's) is shown whole, and so is the tail of a
/// check that has no other finding: then it is the only explanation.
fn tail_repeats(tail: &Diagnostic, diagnostics: &[&Diagnostic]) -> bool {
    let others: Vec<&Diagnostic> = diagnostics
        .iter()
        .copied()
        .filter(|d| d.check == tail.check && !d.is_output_tail())
        .collect();
    if others.is_empty() {
        return false;
    }
    let mut lines = tail.message.lines();
    let headline = lines.next().unwrap_or("");
    // The tail is only here because the check reported no error: the
    // lines that speak of warnings are its findings, or their count.
    let accounted = |line: &str| {
        !line.chars().any(char::is_alphanumeric)
            || headline.contains(line)
            || line.to_lowercase().contains("warning")
            || others.iter().any(|d| said_by(d, line))
    };
    lines.skip(1).map(str::trim).all(accounted)
}

/// Whether the line `line` of a check's output is part of what finding
/// `d` says: its message's first line, a line of its message (a snippet,
/// a `help:`), its place, or its file's name heading its findings.
fn said_by(d: &Diagnostic, line: &str) -> bool {
    let first = d.message.lines().next().unwrap_or("").trim();
    let place = d.location();
    (!first.is_empty() && line.contains(first))
        || d.message.lines().any(|l| l.trim() == line)
        || (d.line.is_some() && !place.is_empty() && line.contains(&place))
        || d.file.as_deref().is_some_and(|f| line.ends_with(f))
}

/// The output tail's headline alone (its telling line), where its last
/// lines repeat the check's other findings, listed with it.
fn tail_headline(d: &Diagnostic, out: &mut dyn Write, p: &Paint) -> io::Result<()> {
    let first = clean(&shorten(&super::text::first_line(d), MAX_LINE_CHARS)).into_owned();
    head_line(d, first, out, p)?;
    writeln!(
        out,
        "    {}",
        p.dim("│ its last lines of output repeat this check's findings (the full log has them)")
    )
}

/// The findings of a check that passed, one line each
/// (`file:line:col warning message`), as many as `diagnostic_lines`
/// shows, and how many more.
fn short_lines(
    diagnostics: &[&Diagnostic],
    shown: &[(&Diagnostic, &str)],
    out: &mut dyn Write,
    p: &Paint,
) -> io::Result<()> {
    for d in diagnostics.iter().take(MAX_PER_CHECK) {
        if let Some(under) = shown_under(d, shown) {
            repeat_line(d, under, out, p)?;
            continue;
        }
        let first = clean(&shorten(&super::text::first_line(d), MAX_LINE_CHARS)).into_owned();
        head_line(d, first, out, p)?;
    }
    if diagnostics.len() > MAX_PER_CHECK {
        writeln!(out, "  … and {} more", diagnostics.len() - MAX_PER_CHECK)?;
    }
    Ok(())
}

/// The line that says a check found more than it was allowed to keep:
/// those were counted, never parsed into the verdict, so no report lists
/// them, and a count that left them out would pass a million findings off
/// as a thousand.
fn not_kept(dropped: usize) -> String {
    format!(
        "… and {dropped} more found past the check's limit of {MAX_DIAGNOSTICS_PER_CHECK} findings: counted, not kept (its full log has them)"
    )
}

/// Findings of phasegate itself: the handoff documents, with their
/// warnings, and its own diagnostics (files the checks modified).
fn gate_findings(verdict: &Verdict, out: &mut dyn Write, p: &Paint) -> io::Result<()> {
    let mut own: Vec<&Diagnostic> = verdict
        .diagnostics
        .iter()
        .filter(|d| d.check.is_empty())
        .collect();
    by_importance(&mut own);
    if verdict.handoffs.is_empty() && own.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "{}", p.bold("gate"))?;
    for handoff in &verdict.handoffs {
        let path = clean(handoff["path"].as_str().unwrap_or("?"));
        let state = if handoff["valid"] == false {
            p.red("invalid")
        } else if handoff["escalate"] == true {
            p.red("out of retries")
        } else {
            p.green("valid")
        };
        let id_error = handoff["errors"]
            .as_array()
            .is_some_and(|errors| errors.iter().any(|e| e["field"] == "id"));
        let name = super::handoff::document_name(
            handoff["path"].as_str().unwrap_or("?"),
            handoff["id"].as_str(),
            handoff["stage"].as_str(),
            id_error,
        );
        writeln!(out, "  handoff {name}: {state}")?;
        // Its errors, among the diagnostics, are listed under it, before
        // the next document's.
        let (its, others): (Vec<&Diagnostic>, Vec<&Diagnostic>) = own
            .into_iter()
            .partition(|d| d.file.as_deref() == handoff["path"].as_str());
        own = others;
        diagnostic_lines(&its, &[], out, p)?;
        // Its warnings (an unknown field) decide nothing, and are not
        // among the diagnostics: each is a line under it.
        let warnings = handoff["warnings"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        for warning in warnings {
            writeln!(
                out,
                "  {path}:{}:{} {} {}",
                warning["line"],
                warning["column"],
                p.yellow("warning"),
                clean(warning["message"].as_str().unwrap_or_default())
            )?;
        }
    }
    diagnostic_lines(&own, &[], out, p)
}

/// How many characters of a commit id the report shows.
const SHORT_ID: usize = 10;

/// The line under the heading that says which commits were checked: a
/// range (its ends and merge base, as named and as resolved), or every
/// file of a pushed commit; and how CI picked it, or which pushed ref it
/// is. `None` for staged or named files, which need no telling.
fn selection_line(selection: &SelectionSummary) -> Option<String> {
    let short = |id: &str| id.chars().take(SHORT_ID).collect::<String>();
    // A name as given, with the commit it named; a commit id given in
    // full is shown once, shortened.
    let named = |given: Option<&str>, id: Option<&str>| match (given, id) {
        (Some(given), Some(id)) if given == id => short(id),
        (Some(given), Some(id)) => format!("{} ({})", clean(given), short(id)),
        (Some(given), None) => clean(given).into_owned(),
        (None, Some(id)) => short(id),
        (None, None) => "?".to_string(),
    };
    let (from, to) = (selection.from.as_deref(), selection.to.as_deref());
    let mut line = match selection.mode {
        // A push's own commits after a merge: `git log <to> --not
        // <published>`, each file compared with every published commit.
        "range" if !selection.published.is_empty() => format!(
            "files: {} changed by the commits up to {} that are not in the published {}",
            selection.files,
            named(to, selection.to_commit.as_deref()),
            selection
                .published
                .iter()
                .map(|id| short(id))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        "range" => {
            let from_id = selection.from_commit.as_deref();
            let from = match selection.merge_base.as_deref() {
                // A commit given by its id that is the merge base itself
                // (a push's previous commit).
                Some(base) if from.is_some_and(|given| given == base) => {
                    format!("{} (the merge base)", short(base))
                }
                Some(base) => match from {
                    Some(given) if Some(given) == from_id => {
                        format!("{} (merge base {})", short(given), short(base))
                    }
                    Some(given) => format!("{} (merge base {})", clean(given), short(base)),
                    None => format!("{} (merge base {})", named(None, from_id), short(base)),
                },
                None => named(from, from_id),
            };
            format!(
                "files: {} changed between {from} and {}",
                selection.files,
                named(to, selection.to_commit.as_deref())
            )
        }
        "all" if to.is_some() => format!(
            "files: {}, every file of {}",
            selection.files,
            named(to, selection.to_commit.as_deref())
        ),
        _ => return None,
    };
    if let Some(ci) = &selection.ci {
        line.push_str(&format!(" · {}", clean(ci)));
    }
    if let Some(pushed) = &selection.pushed_ref {
        line.push_str(&format!(" · pushing {}", clean(pushed)));
    }
    Some(line)
}

/// What explains a failure comes before what only comments on it, and
/// before the cut at `MAX_PER_CHECK`: errors before warnings before notes,
/// the change's own before pre-existing ones, then by file and line.
fn by_importance(diagnostics: &mut [&Diagnostic]) {
    diagnostics.sort_by_key(|d| {
        (
            d.severity,
            d.pre_existing,
            d.file.is_none(),
            d.file.as_deref(),
            d.line,
            d.column,
        )
    });
}

fn check_line(check: &CheckResult, width: usize, out: &mut dyn Write, p: &Paint) -> io::Result<()> {
    let (mark, status) = match check.status {
        CheckStatus::Passed => (p.green("✓"), p.green("passed")),
        CheckStatus::Skipped => (p.dim("-"), p.dim("skipped")),
        CheckStatus::Warned => (p.yellow("!"), p.yellow("warned")),
        other if check.effect == Effect::Warn || check.effect == Effect::FailOpen => {
            (p.yellow("!"), p.yellow(other.as_str()))
        }
        other => (p.red("✗"), p.red(other.as_str())),
    };
    let status_pad = 10usize.saturating_sub(check.status.as_str().chars().count());
    let mut detail = Vec::new();
    // A timed-out check ran as long as its limit, which its reason names.
    if !matches!(
        check.status,
        CheckStatus::Skipped | CheckStatus::Missing | CheckStatus::TimedOut
    ) {
        detail.push(format_duration(std::time::Duration::from_millis(
            check.duration_ms,
        )));
    }
    if let Some(reason) = &check.reason {
        // The status beside it is not said again (`timed out  timed out
        // after 10m`, `crashed  crashed: killed by signal SIGSEGV`).
        let reason = reason
            .strip_prefix(check.status.as_str())
            .map(|rest| rest.trim_start_matches(':').trim_start())
            .filter(|rest| !rest.is_empty())
            .unwrap_or(reason);
        detail.push(clean(reason).into_owned());
    }
    if check.diagnostics > 0 && check.status != CheckStatus::Passed {
        // What the check found, the findings past its limit included.
        let n = check.diagnostics + check.dropped_diagnostics;
        let mut count = format!("{n} diagnostic{}", if n == 1 { "" } else { "s" });
        if check.dropped_diagnostics > 0 {
            count.push_str(&format!(" ({} kept)", check.diagnostics));
        }
        detail.push(count);
    }
    let name = clean(&check.name);
    writeln!(
        out,
        "  {mark} {name}{name_pad}  {status}{pad}  {detail}",
        name_pad = " ".repeat(width.saturating_sub(columns(&name))),
        pad = " ".repeat(status_pad),
        detail = p.dim(&detail.join(" · ")),
    )
}

/// What a diagnostic's line says before its message: its place
/// (`file:line:col`, empty when it has none), its severity, and its code
/// and test (each with a space before it, or empty).
fn head(d: &Diagnostic, p: &Paint) -> (String, String, String) {
    let mut place = String::new();
    if let Some(file) = &d.file {
        place.push_str(&clean(file));
        if let Some(line) = d.line {
            place.push_str(&format!(":{line}"));
            if let Some(col) = d.column {
                place.push_str(&format!(":{col}"));
            }
        }
    }
    let severity = match d.severity {
        Severity::Error => p.red("error"),
        Severity::Warning => p.yellow("warning"),
        other => p.dim(other.as_str()),
    };
    let mut code = code_apart(d)
        .map(|c| format!(" {}", clean(c)))
        .unwrap_or_default();
    if let Some(test) = &d.test {
        code.push_str(&format!(" [{}]", clean(test)));
    }
    (place, severity, code)
}

/// A finding's first line: its place, severity and code, then `first`
/// (its message's first line), marked when the finding was there before
/// the change.
fn head_line(d: &Diagnostic, first: String, out: &mut dyn Write, p: &Paint) -> io::Result<()> {
    let (place, severity, code) = head(d, p);
    let first = if d.pre_existing {
        format!("{first} {}", p.dim("(pre-existing)"))
    } else {
        first
    };
    if place.is_empty() {
        writeln!(out, "  {severity}{code} {first}")
    } else {
        writeln!(out, "  {} {severity}{code} {first}", p.bold(&place))
    }
}

fn diagnostic_line(d: &Diagnostic, out: &mut dyn Write, p: &Paint) -> io::Result<()> {
    let message = super::text::message(d);
    let mut lines = message
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .map(|l| clean(&shorten(l, MAX_LINE_CHARS)).into_owned());
    head_line(d, lines.next().unwrap_or_default(), out, p)?;
    // The line as the check saw it, with a label at the column.
    out.write_all(super::snippet::render(d, "   ", p.color).as_bytes())?;
    for line in lines.by_ref().take(MAX_MESSAGE_LINES) {
        writeln!(out, "    {}", p.dim(&format!("│ {line}")))?;
    }
    let more = lines.count();
    if more > 0 {
        writeln!(
            out,
            "    {}",
            p.dim(&format!(
                "│ … and {more} more line{} (the verdict and the check's log have them)",
                if more == 1 { "" } else { "s" }
            ))
        )?;
    }
    Ok(())
}

fn verdict_line(verdict: &Verdict, out: &mut dyn Write, p: &Paint) -> io::Result<()> {
    let code = verdict.exit_code().code();
    let line = match verdict.status {
        Status::Passed => p.green("✓ passed — proceed"),
        Status::Warned => p.yellow("! warned — proceed, but read the warnings above"),
        Status::Failed => p.red("✗ failed — fix what is listed above and run again"),
        Status::Incomplete if verdict.fail_open => {
            p.yellow("! incomplete — verification did not finish; the fast profile lets it through")
        }
        Status::Incomplete if verdict.error.is_some() => {
            match verdict.error.as_ref().map(|e| e.kind) {
                Some("config") => p.red("✗ invalid configuration — fix it and run again"),
                Some("usage") => p.red("✗ usage error — nothing was checked"),
                _ => p.red("✗ incomplete — phasegate could not finish"),
            }
        }
        Status::Incomplete => {
            p.red("✗ incomplete — verification did not finish; remove the cause and run again")
        }
        // The queue says what for, and is where the person answers.
        Status::Blocked if !verdict.interventions.is_empty() => {
            p.red("✗ blocked — a person is needed: `phasegate interventions` says what for")
        }
        Status::Blocked => p.red("✗ blocked — a person is needed"),
    };
    writeln!(
        out,
        "{} {}",
        p.bold(&line),
        p.dim(&format!("(exit {code})"))
    )
}
