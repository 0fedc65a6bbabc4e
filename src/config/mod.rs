//! `phasegate.toml`: its schema, loading with exact error spans, the embedded
//! defaults and language detection. Nothing here runs a check or prints.

mod defaults;
mod duration;
mod error;
mod load;
mod model;
mod suggest;

pub use defaults::{
    detect, detect_language, detect_languages, init_template, install_hint, install_in_venv,
    languages_of, missing_programs, nested_names, package_of, project_venvs, projects_among,
    projects_at, projects_below, python_runners, python_tool, unchecked_names, Detected, Language,
    MissingProgram, NestedProject, PackageManager, PythonRunner, PythonTools, RootFiles, Untested,
    MARKERS, STAGES,
};
pub use duration::parse_duration;
pub use error::{ConfigError, ConfigProblem};
pub use load::{
    load, load_committed, load_version, load_with, CONFIG_FILE, DEFAULT_TIMEOUT, LOCAL_FILE,
};
pub use model::*;
pub use suggest::suggest;

#[cfg(test)]
mod tests;
