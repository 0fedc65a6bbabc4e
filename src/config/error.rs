//! Configuration errors as miette diagnostics: each problem points at the
//! exact span of the file it is in, with a label and a `help:` line.

use std::fmt;

use miette::{Diagnostic, NamedSource, SourceSpan};

use super::ConfigLocation;

/// One configuration file's name (relative to the root) and text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

/// One problem in one file.
#[derive(Debug, Clone, thiserror::Error, Diagnostic)]
#[error("{message}")]
pub struct Problem {
    pub message: String,
    #[source_code]
    pub source_code: NamedSource<String>,
    #[label("{label}")]
    pub span: Option<SourceSpan>,
    pub label: String,
    #[help]
    pub help: Option<String>,
    /// Where the span starts, for the JSON verdict.
    pub location: Option<ConfigLocation>,
}

/// A problem as plain data, for the JSON verdict.
#[derive(Debug, Clone)]
pub struct ConfigProblem {
    pub message: String,
    pub help: Option<String>,
    pub location: Option<ConfigLocation>,
}

/// Everything wrong with the configuration.
#[derive(Debug, Clone)]
pub struct ConfigError {
    problems: Vec<Problem>,
}

impl ConfigError {
    pub(crate) fn new(problems: Vec<Problem>) -> ConfigError {
        ConfigError { problems }
    }

    /// One problem with no span: a file that cannot be read, say.
    pub(crate) fn unlocated(file: &str, message: String, help: Option<String>) -> ConfigError {
        ConfigError::new(vec![Problem {
            message,
            source_code: NamedSource::new(file, String::new()),
            span: None,
            label: String::new(),
            help,
            location: None,
        }])
    }

    pub fn problems(&self) -> Vec<ConfigProblem> {
        self.problems
            .iter()
            .map(|p| ConfigProblem {
                message: p.message.clone(),
                help: p.help.clone(),
                location: p.location.clone(),
            })
            .collect()
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files: Vec<&str> = {
            let mut names: Vec<&str> = self.problems.iter().map(|p| p.source_code.name()).collect();
            names.dedup();
            names
        };
        match self.problems.len() {
            1 => write!(f, "invalid configuration in `{}`", files.join("`, `")),
            n => write!(
                f,
                "invalid configuration: {n} problems in `{}`",
                files.join("`, `")
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

impl Diagnostic for ConfigError {
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(
            "fix the problems below; `phasegate init` writes a commented example",
        ))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        Some(Box::new(self.problems.iter().map(|p| p as &dyn Diagnostic)))
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}
