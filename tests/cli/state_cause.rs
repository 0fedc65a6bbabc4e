//! Notes of the state directory: one cause, one note.

use crate::state::state;
use crate::state_records::{lines_naming, notes_naming};
use crate::support::*;

/// A repository whose one check, `broken`, fails; its state directory
/// `.git/phasegate` not made yet.
fn failing() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"broken\", command = \"false\" } ]\n",
    );
    repo.commit_all("one");
    repo
}

#[test]
fn a_state_directory_that_is_a_file_is_one_note_with_all_it_stopped_and_what_to_do() {
    let repo = failing();
    std::fs::write(state(&repo), "in the way\n").unwrap();
    let temp = tempfile::tempdir().unwrap();
    let env = [("TMPDIR", temp.path().to_str().unwrap())];
    let cause = "is not a directory";

    let run = repo.phasegate_with(&["run", "--all-files", "--format", "json"], &env);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    let said = notes_naming(&v, cause);
    assert_eq!(said.len(), 1, "{:#?}", v["notes"]);
    let note = &said[0];
    let dir = state(&repo).display().to_string();
    // The cause once, every consequence, and what to do.
    assert_eq!(note.matches(cause).count(), 1, "{note}");
    assert_eq!(note.matches(&dir).count(), 1, "{note}");
    for part in [
        &format!("`{dir}`: it is not a directory"),
        "move that file aside",
        "the logs are under",
        "the run was not recorded",
        "1 intervention(s) the queue could not take were not kept either: they are on standard error only",
    ] {
        assert!(note.contains(part), "no `{part}` in: {note}");
    }
    assert_eq!(notes_naming(&v, "logs are under").len(), 1, "{v:#}");
    assert_eq!(notes_naming(&v, "not recorded").len(), 1, "{v:#}");
    // The logs are where it says.
    let log = std::path::PathBuf::from(check(&v, "broken")["log"].as_str().unwrap());
    assert!(log.starts_with(temp.path()), "{}", log.display());
    // Standard error tells the person watching once, and keeps the
    // intervention nothing else could.
    assert_eq!(lines_naming(&run.stderr, cause), 1, "{}", run.stderr);
    assert_eq!(
        lines_naming(&run.stderr, "check `broken` failed"),
        1,
        "{}",
        run.stderr
    );

    // The human report says it once among its notes, and standard error
    // does not say it again.
    let run = repo.phasegate_with(&["run", "--all-files"], &env);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(lines_naming(&run.stdout, cause), 1, "{}", run.stdout);
    assert_eq!(lines_naming(&run.stderr, cause), 0, "{}", run.stderr);
    assert_eq!(
        lines_naming(&run.stderr, "check `broken` failed"),
        1,
        "{}",
        run.stderr
    );
}

#[test]
fn a_runs_directory_that_is_a_file_is_named_with_what_to_do() {
    let repo = failing();
    std::fs::create_dir_all(state(&repo)).unwrap();
    std::fs::write(state(&repo).join("runs"), "in the way\n").unwrap();
    let temp = tempfile::tempdir().unwrap();
    let env = [("TMPDIR", temp.path().to_str().unwrap())];
    let (code, v) = repo.verdict_with(&["--all-files"], &env);
    assert_eq!(code, 1, "{v:#}");
    let runs = state(&repo).join("runs").display().to_string();
    let said = notes_naming(&v, "run directory");
    assert_eq!(said.len(), 1, "{:#?}", v["notes"]);
    assert!(
        said[0].contains(&format!("`{runs}` is not a directory"))
            && said[0].contains("move that file aside")
            && said[0].contains("the logs are under"),
        "{}",
        said[0]
    );
    // The rest of the state is kept as usual.
    let history = repo.phasegate(&["history", "--format", "json"]);
    assert_eq!(history.code, 0, "{}", history.stderr);
    assert_eq!(history.json()["runs"].as_array().unwrap().len(), 1);
}

#[test]
fn an_emergency_log_that_is_a_directory_is_said_once_with_what_to_do() {
    let repo = failing();
    // Neither the queue nor `emergency.log` can take the run's record.
    std::fs::create_dir_all(state(&repo).join("interventions.jsonl")).unwrap();
    std::fs::create_dir_all(state(&repo).join("emergency.log")).unwrap();
    let emergency = state(&repo).join("emergency.log").display().to_string();
    let run = repo.phasegate(&["run", "--all-files", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    let said = notes_naming(&v, "emergency.log");
    assert_eq!(said.len(), 1, "{:#?}", v["notes"]);
    assert!(
        said[0].contains(&format!("`{emergency}`: it is a directory"))
            && said[0].contains("move it aside")
            && said[0].contains("on standard error only"),
        "{}",
        said[0]
    );
    assert_eq!(said[0].matches("Is a directory").count(), 1, "{}", said[0]);
    assert_eq!(notes_naming(&v, "intervention queue").len(), 1, "{v:#}");
    // Each cause once on standard error, and the record kept there.
    assert_eq!(
        lines_naming(&run.stderr, "emergency.log`: it is a directory"),
        1,
        "{}",
        run.stderr
    );
    assert_eq!(
        lines_naming(&run.stderr, "check `broken` failed"),
        1,
        "{}",
        run.stderr
    );

    // The human report has the notes: standard error has the record alone.
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        lines_naming(&run.stdout, "emergency.log`: it is a directory"),
        1,
        "{}",
        run.stdout
    );
    assert_eq!(
        lines_naming(&run.stderr, "Is a directory"),
        0,
        "{}",
        run.stderr
    );
    assert_eq!(
        lines_naming(&run.stderr, "check `broken` failed"),
        1,
        "{}",
        run.stderr
    );
}
