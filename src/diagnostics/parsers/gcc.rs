//! gcc, g++ and clang: the human format (with the source snippet and
//! fix-it lines kept in the message) and gcc's `-fdiagnostics-format=json`.
//! gcc counts display columns, clang counts bytes; when the command does
//! not name the compiler, the output's own marks tell which printed it.

use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem;
use regex::Regex;

use super::generic::compiler_line;
use super::{has_colon_digit, json_number, Found, Grammar, Out};
use crate::diagnostics::{ColumnUnit, Severity};

/// Snippet lines kept in a message.
const MAX_BODY_LINES: usize = 12;

/// Lines that end a snippet: `main.c: In function 'f':`, `In file
/// included from x.h:3,`, `2 errors generated.`
static CONTEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[^\s:][^:]*: In (?:function|member function|constructor|destructor|instantiation|static member function)|In file included from |\s+from |\d+ (?:warnings?|errors?)(?: and \d+ errors?)? generated\.|compilation terminated\.)")
        .expect("the gcc context regex is valid")
});

/// The line gcc prints before the diagnostics of each function (`main.c:
/// In function 'main':`); clang prints none.
static IN_FUNCTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[^\s:][^:]*: In (?:function|member function|constructor|destructor|instantiation|static member function) ")
        .expect("the gcc function-context regex is valid")
});

/// The count clang ends each run with (`1 warning and 2 errors
/// generated.`); gcc prints none.
static GENERATED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d+ (?:warnings?|errors?)(?: and \d+ errors?)? generated\.$")
        .expect("the clang summary regex is valid")
});

/// The compiler a reading stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compiler {
    /// Named by the command or by `parser = "..."`.
    Known,
    /// `parser = "generic"`: any tool printing compiler-shaped lines.
    Generic,
    /// The command said nothing: the output tells, by gcc's and clang's
    /// marks, and until it does the reading is generic.
    Told { gcc: bool, clang: bool },
}

#[derive(Debug)]
pub struct Gcc {
    /// `gcc`, or `generic` when the compiler is not known.
    name: &'static str,
    unit: ColumnUnit,
    compiler: Compiler,
    open: Option<(Found, usize)>,
}

impl Gcc {
    /// gcc (display columns) or clang (bytes).
    pub fn new(unit: ColumnUnit) -> Gcc {
        Gcc {
            name: "gcc",
            unit,
            compiler: Compiler::Known,
            open: None,
        }
    }

    /// Any tool printing `file:line[:col]: severity: message`: columns
    /// as printed, and only indented lines after it kept as its snippet.
    pub fn generic() -> Gcc {
        Gcc {
            name: "generic",
            unit: ColumnUnit::Character,
            compiler: Compiler::Generic,
            open: None,
        }
    }

    /// The reading of an output whose command does not name the tool
    /// (`make`, `ninja`, `cmake --build`): generic, unless the output
    /// shows it came from gcc or clang, whose columns are not characters.
    pub fn told_by_output() -> Gcc {
        Gcc {
            compiler: Compiler::Told {
                gcc: false,
                clang: false,
            },
            ..Gcc::generic()
        }
    }

    /// What the output has told so far: the compiler's name and unit, or
    /// `None` while the reading is generic. clang's closing count outranks
    /// gcc's marks, because clang 17 and later print gcc's numbered
    /// snippet lines too.
    fn told(&self) -> Option<(&'static str, ColumnUnit)> {
        match self.compiler {
            Compiler::Told { clang: true, .. } => Some(("clang", ColumnUnit::Byte)),
            Compiler::Told { gcc: true, .. } => Some(("gcc", ColumnUnit::Display)),
            _ => None,
        }
    }

    /// Notes a mark of gcc in the output, when telling.
    fn gcc_seen(&mut self) {
        if let Compiler::Told { gcc, .. } = &mut self.compiler {
            *gcc = true;
        }
    }

    /// Notes a mark of clang in the output, when telling.
    fn clang_seen(&mut self) {
        if let Compiler::Told { clang, .. } = &mut self.compiler {
            *clang = true;
        }
    }
}

/// A numbered snippet line, `    4 |     return a + b`: gcc's since gcc 9
/// (and clang's since clang 17).
fn numbered_snippet(line: &str) -> bool {
    let rest = line.trim_start_matches(' ');
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest.len() < line.len()
        && digits > 0
        && rest[digits..]
            .strip_prefix(" |")
            .is_some_and(|after| after.is_empty() || after.starts_with(' '))
}

impl Grammar for Gcc {
    fn name(&self) -> &'static str {
        // clang's reading is gcc's grammar counting bytes, as
        // `parser = "clang"` gives it.
        if self.told().is_some() {
            "gcc"
        } else {
            self.name
        }
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            // Telling, clang's closing count (`2 errors generated.`) is
            // wanted too.
            first: if matches!(self.compiler, Compiler::Told { .. }) {
                b"0123456789"
            } else {
                b""
            },
            anywhere: b":",
            ..super::Triggers::default()
        })
    }

    fn busy(&self) -> bool {
        self.open.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        if self.busy() {
            return true;
        }
        let telling = matches!(self.compiler, Compiler::Told { .. });
        // clang's closing count (`2 errors generated.`) holds no colon; the
        // test at both ends costs nothing on the lines that start with a
        // digit for another reason (a log of numbers).
        if telling && line.ends_with(b" generated.") && line.first().is_some_and(u8::is_ascii_digit)
        {
            return true;
        }
        // Everything else this grammar reads holds a colon: a line without
        // one is turned down after one scan.
        let Some(colon) = memchr::memchr(b':', line) else {
            return false;
        };
        let rest = line.get(colon..).unwrap_or_default();
        // Outside a diagnostic, telling the compiler takes gcc's function
        // context lines.
        has_colon_digit(rest) || (telling && memmem::find(rest, b": In ").is_some())
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if matches!(self.compiler, Compiler::Told { .. }) {
            if line.contains(": In ") && IN_FUNCTION.is_match(line) {
                self.gcc_seen();
            } else if line.ends_with(" generated.") && GENERATED.is_match(line) {
                self.clang_seen();
            }
        }
        let dialect = if self.name == "generic" {
            "generic"
        } else {
            "human"
        };
        if let Some(found) = compiler_line(line, dialect) {
            // A warning's flag (`[-Wunused-variable]`) is a C compiler's:
            // gcc's, unless clang's closing count says otherwise.
            if found
                .code
                .as_deref()
                .is_some_and(|c| c.starts_with("-W") || c.starts_with("-f"))
            {
                self.gcc_seen();
            }
            if let Some((done, _)) = self.open.take() {
                out.push(done);
            }
            self.open = Some((found.unit(self.unit).range(at), 0));
            return;
        }
        if self.open.is_none() {
            return;
        }
        if numbered_snippet(line) {
            self.gcc_seen();
        }
        // Unless the command named the compiler, only indented lines
        // continue a snippet: gcc's numbered lines are indented, and what
        // a launcher prints between them (`make: *** [...] Error 1`, the
        // next command) is not.
        let foreign = self.compiler != Compiler::Known && !line.starts_with([' ', '\t']);
        if foreign || line.trim().is_empty() || CONTEXT.is_match(line) {
            if let Some((done, _)) = self.open.take() {
                out.push(done);
            }
            return;
        }
        let Some((found, body)) = self.open.as_mut() else {
            return;
        };
        if *body < MAX_BODY_LINES {
            found.message.push('\n');
            found.message.push_str(line);
            *body += 1;
        }
        found.range.end = at.end;
    }

    /// gcc's `-fdiagnostics-format=json`: one array of diagnostics, each
    /// with `locations` (caret and finish) and `children` (notes).
    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        let Some(items) = doc.as_array() else {
            return;
        };
        let looks_like_gcc = items
            .first()
            .is_some_and(|d| d.get("kind").is_some() && d.get("locations").is_some());
        if !looks_like_gcc {
            return;
        }
        self.gcc_seen();
        let mut stack: Vec<&serde_json::Value> = items.iter().rev().collect();
        while let Some(d) = stack.pop() {
            let kind = d["kind"].as_str().unwrap_or("error");
            let caret = &d["locations"][0]["caret"];
            let finish = &d["locations"][0]["finish"];
            let mut found = Found::new(
                "json",
                Severity::from_word(kind.trim_start_matches("fatal ")),
                d["message"].as_str().unwrap_or(""),
            )
            .code(d["option"].as_str().map(str::to_string))
            .range(at);
            if let Some(file) = caret["file"].as_str() {
                // `byte-column` since gcc 11; `column` (display) before.
                let (column, unit) = match json_number(&caret["byte-column"]) {
                    Some(c) => (Some(c), ColumnUnit::Byte),
                    None => (json_number(&caret["column"]), ColumnUnit::Display),
                };
                let end_column = if unit == ColumnUnit::Byte {
                    json_number(&finish["byte-column"])
                } else {
                    json_number(&finish["column"])
                };
                found = found
                    .at(file, json_number(&caret["line"]), column)
                    .ends(json_number(&finish["line"]), end_column)
                    .unit(unit);
            }
            out.push(found);
            if let Some(children) = d["children"].as_array() {
                stack.extend(children.iter().rev());
            }
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if let Some((done, _)) = self.open.take() {
            out.push(done);
        }
    }

    /// A compiler-shaped line read before the output told which compiler
    /// printed it is that compiler's: its columns count what the
    /// compiler's do. gcc's JSON findings keep their own units.
    fn relabel(&self, found: &mut Found) {
        let Some((compiler, unit)) = self.told() else {
            return;
        };
        if found.dialect != "generic" {
            return;
        }
        found.dialect = "human";
        found.unit = unit;
        if compiler == "clang" {
            found.tool = Some("clang");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::{Origin, ParserChoice};
    use crate::diagnostics::tests::{extract, recorded, recorded_in_repo};
    use crate::diagnostics::{ColumnUnit, Extracted, Extractor};

    /// Each finding's place, parser and dialect, tool and the unit its
    /// tool counted in.
    fn read(found: &Extracted) -> Vec<(String, &str, &str, &str, ColumnUnit)> {
        found
            .diagnostics
            .iter()
            .map(|d| {
                let parser = d.parser.unwrap_or_default();
                (
                    d.location(),
                    parser.name,
                    parser.dialect,
                    d.tool.as_str(),
                    d.tool_column_unit,
                )
            })
            .collect()
    }

    /// `text` read by `parser = "auto"` from a check running `make`.
    fn told(text: &str) -> Extracted {
        let root = Path::new("/repo");
        let argv = ["make".to_string()];
        let x = Extractor::new("c", Origin::Build, &ParserChoice::Auto, &argv, root, root);
        extract(x, text.as_bytes())
    }

    #[test]
    fn gccs_output_is_gccs_when_the_command_does_not_name_the_compiler() {
        // gcc 12.2.0 run by `make`: display columns past TABs (`3:16`,
        // `7:17`, `9:33`, `8:25`) are the characters 9, 10, 14 and 7, as
        // when the command names gcc.
        let gcc = |place: &str| {
            (
                format!("tabs.c:{place}"),
                "gcc",
                "human",
                "gcc",
                ColumnUnit::Display,
            )
        };
        let expected = [
            gcc("3:9"),
            gcc("3:9"),
            gcc("7:10"),
            gcc("9:14"),
            gcc("8:7"),
            gcc("10:1"),
        ];
        for command in ["make CFLAGS=-Wall tabs.o", "ninja", "cmake --build build"] {
            let found = recorded_in_repo(
                command,
                "gcc/make-tabs.txt",
                &[("tabs.c", "gcc/tabs.c.txt")],
            );
            assert_eq!(read(&found), expected, "{command}");
            assert_eq!(found.parser, Some("gcc"), "{command}");
            // make's own closing line is not part of the last snippet.
            let last = &found.diagnostics[5].message;
            assert!(!last.contains("make:"), "{last}");
        }
        let named = recorded_in_repo(
            "gcc -Wall -c tabs.c",
            "gcc/gcc-tabs.txt",
            &[("tabs.c", "gcc/tabs.c.txt")],
        );
        assert_eq!(read(&named), expected);
        // gcc's JSON is gcc's too.
        let found = recorded("auto", "gcc/gcc.json", None);
        assert_eq!(found.parser, Some("gcc"));
    }

    #[test]
    fn clangs_output_is_clangs_when_the_command_does_not_name_the_compiler() {
        // clang 14.0.6 counts bytes: `2:35`, `3:10`, `4:22` after `é`, a
        // TAB and `日本` are the characters 34, 10 and 18.
        let clang = |place: &str| {
            (
                format!("wide.c:{place}"),
                "gcc",
                "human",
                "clang",
                ColumnUnit::Byte,
            )
        };
        let found = recorded_in_repo(
            "make",
            "clang/clang-wide.txt",
            &[("wide.c", "gcc/wide.c.txt")],
        );
        assert_eq!(read(&found), [clang("2:34"), clang("3:10"), clang("4:18")]);
        let found = recorded("auto", "clang/clang.txt", None);
        assert!(
            read(&found)
                .iter()
                .all(|d| d.3 == "clang" && d.4 == ColumnUnit::Byte),
            "{:?}",
            read(&found)
        );
        // clang 17 and later number their snippet lines as gcc does; the
        // closing count still says clang (from llvm-project issue 63524).
        let text = "/tmp/a.c:5:10: warning: format specifies type 'double' but the argument has type 'int' [-Wformat]\n    5 |   printf(\"%f\",\n      |           ~~\n      |           %d\n    6 |          x);\n      |          ^\n1 warning generated.\n";
        let found = told(text);
        assert_eq!(
            read(&found),
            [(
                "/tmp/a.c:5:10".to_string(),
                "gcc",
                "human",
                "clang",
                ColumnUnit::Byte
            )]
        );
    }

    #[test]
    fn compiler_shaped_lines_without_a_compilers_marks_stay_generic() {
        // A note child and an indented line are any tool's.
        let text = "src/a.c:3:7: error: no semicolon\nsrc/a.c:3:7: note: see here\n    indented detail\nlint.sh:1:2: warning: too long [line-length]\n";
        let found = told(text);
        assert_eq!(found.parser, Some("generic"));
        assert!(
            read(&found)
                .iter()
                .all(|d| (d.1, d.2, d.4) == ("generic", "generic", ColumnUnit::Character)),
            "{:?}",
            read(&found)
        );
        // A warning's flag is a C compiler's; without clang's closing
        // count, gcc's.
        let found = told("a.c:2:9: warning: unused variable 'x' [-Wunused-variable]\n");
        assert_eq!(
            read(&found),
            [(
                "a.c:2:9".to_string(),
                "gcc",
                "human",
                "gcc",
                ColumnUnit::Display
            )]
        );
    }
}
