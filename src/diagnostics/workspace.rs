//! Which package of a Node workspace each line of a recursive run comes
//! from, when a package manager ran a script in every package from the
//! workspace's root (`npm test --workspaces`, `pnpm -r test`, `yarn
//! workspaces foreach -v run test`): the runner of each package names its
//! files from that package's directory, and a workspace may mix runners.
//!
//! The marks are read as the package managers print them: npm's
//! `> a@1.0.0 test` and yarn 1's `> a` before a package's lines, pnpm's
//! `packages/a test: ` and yarn 4's `[a]: ` before each line. A mark only
//! counts when it names a package the workspace's manifests list; the
//! disk is read once, when the first line that looks like a mark comes.
//! This module reads files and decides; it never prints.

use std::path::{Path, PathBuf};

/// The most directory entries looked at while listing a workspace's
/// packages: a root whose globs reach far (`**`) is listed in part.
const MAX_LISTED_ENTRIES: usize = 50_000;
/// How deep below the workspace's root packages are looked for.
const MAX_PACKAGE_DEPTH: usize = 6;

/// A line a package manager printed about a package's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark<'a> {
    /// npm's `> a@1.0.0 test`: the lines up to the next mark are the
    /// package's.
    Npm { name: &'a str },
    /// yarn 1's `> a`: the same, named alone.
    Bare { name: &'a str },
    /// pnpm's `packages/a test: text` (`rest`, the package's own line)
    /// or `packages/a test$ jest` (`opens`, the command it runs): the
    /// package's directory as printed, relative to where pnpm ran.
    Dir {
        dir: &'a str,
        rest: &'a str,
        opens: bool,
    },
    /// yarn 4's `[a]: text` (with `-v`).
    Named { name: &'a str, rest: &'a str },
}

/// Whether a raw line may be a mark that starts a package's output
/// (`Mark::of` says for sure): a cheap look for the output's filter, so a
/// log with no marks pays a byte or two a line. pnpm's prefixed lines
/// follow its `$` line, which this lets through.
pub fn may_mark(line: &[u8]) -> bool {
    match line {
        [b'>', b' ', ..] | [b'[', ..] => true,
        _ => memchr::memchr(b'$', line).is_some(),
    }
}

impl<'a> Mark<'a> {
    /// The mark `line` is (without its terminator, trailing spaces
    /// trimmed, colours removed), if any.
    pub fn of(line: &'a str) -> Option<Mark<'a>> {
        if let Some(rest) = line.strip_prefix("> ") {
            return match rest.split_once(' ') {
                // `@scope/name@1.0.0`: the version follows the last `@`.
                Some((package, script)) if !script.trim().is_empty() => package
                    .rsplit_once('@')
                    .filter(|(name, version)| !name.is_empty() && !version.is_empty())
                    .map(|(name, _)| Mark::Npm { name }),
                Some(_) => None,
                None => (!rest.is_empty()).then_some(Mark::Bare { name: rest }),
            };
        }
        if let Some(inner) = line.strip_prefix('[') {
            let (name, rest) = inner.split_once("]:")?;
            let rest = match rest.strip_prefix(' ') {
                Some(rest) => rest,
                None if rest.is_empty() => rest,
                None => return None,
            };
            return (!name.is_empty() && !name.contains(char::is_whitespace))
                .then_some(Mark::Named { name, rest });
        }
        // `<dir> <script>$ <command>` or `<dir> <script>: <text>`.
        let (dir, after) = line.split_once(' ')?;
        let script_end = after.find(' ').unwrap_or(after.len());
        let script = &after[..script_end];
        let rest = after[script_end..].strip_prefix(' ').unwrap_or("");
        let (script, opens) = match script.strip_suffix('$') {
            Some(script) => (script, true),
            None => (script.strip_suffix(':')?, false),
        };
        (!dir.is_empty() && !script.is_empty()).then_some(Mark::Dir { dir, rest, opens })
    }
}

/// A Node workspace's packages: the directories its manifest's globs
/// (`package.json`'s `workspaces`, `pnpm-workspace.yaml`'s `packages`)
/// reach that hold a `package.json`, each with the name it gives.
#[derive(Debug, Default)]
pub struct Workspace {
    root: PathBuf,
    packages: Vec<(PathBuf, Option<String>)>,
}

impl Workspace {
    /// The workspace the check's directory `cwd` is in: the nearest
    /// directory from it up to the repository's `root` whose
    /// `pnpm-workspace.yaml` or `package.json` lists packages. `None`
    /// when there is none.
    pub fn find(cwd: &Path, root: &Path) -> Option<Workspace> {
        let dirs: Vec<&Path> = if cwd.starts_with(root) {
            cwd.ancestors()
                .take_while(|d| d.starts_with(root))
                .collect()
        } else {
            vec![cwd]
        };
        dirs.into_iter().find_map(|dir| {
            let globs = match std::fs::read_to_string(dir.join("pnpm-workspace.yaml")) {
                Ok(text) => pnpm_globs(&text),
                Err(_) => npm_globs(&std::fs::read(dir.join("package.json")).ok()?)?,
            };
            Some(Workspace::listing(dir, &globs))
        })
    }

    /// The packages under `root` that `globs` reach (a `!` glob leaves
    /// out what it matches), and the root's own.
    fn listing(root: &Path, globs: &[String]) -> Workspace {
        let mut include = globset::GlobSetBuilder::new();
        let mut exclude = globset::GlobSetBuilder::new();
        for glob in globs {
            let (set, glob) = match glob.strip_prefix('!') {
                Some(glob) => (&mut exclude, glob),
                None => (&mut include, glob.as_str()),
            };
            let glob = glob.trim_start_matches("./").trim_end_matches('/');
            if let Ok(glob) = globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
            {
                set.add(glob);
            }
        }
        let (Ok(include), Ok(exclude)) = (include.build(), exclude.build()) else {
            return Workspace::default();
        };
        let mut packages = vec![(root.to_path_buf(), package_name(root))];
        let mut pending = vec![(root.to_path_buf(), 0usize)];
        let mut seen = 0usize;
        while let Some((dir, depth)) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > MAX_LISTED_ENTRIES {
                    break;
                }
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.')
                    || name == "node_modules"
                    || !entry.file_type().is_ok_and(|t| t.is_dir())
                {
                    continue;
                }
                let path = entry.path();
                let Ok(relative) = path.strip_prefix(root) else {
                    continue;
                };
                if include.is_match(relative)
                    && !exclude.is_match(relative)
                    && path.join("package.json").is_file()
                {
                    let name = package_name(&path);
                    packages.push((path.clone(), name));
                }
                if depth + 1 < MAX_PACKAGE_DEPTH {
                    pending.push((path, depth + 1));
                }
            }
        }
        Workspace {
            root: root.to_path_buf(),
            packages,
        }
    }

    /// The directory of the one package named `name`.
    pub fn named(&self, name: &str) -> Option<&Path> {
        let mut found = self
            .packages
            .iter()
            .filter(|(_, n)| n.as_deref() == Some(name));
        let (dir, _) = found.next()?;
        found.next().is_none().then_some(dir.as_path())
    }

    /// The package at `printed`, a directory as pnpm prints it: relative
    /// to the directory it ran in (`cwd`), else to the workspace's root;
    /// shortened to its end past 40 characters (`.../ledger-adapter`),
    /// the one package whose path from `cwd` ends so.
    pub fn at(&self, printed: &str, cwd: &Path) -> Option<&Path> {
        if let Some(end) = printed.strip_prefix("...") {
            let mut found = self.packages.iter().filter(|(dir, _)| {
                relative_from(dir, cwd).is_some_and(|r| r.len() > end.len() && r.ends_with(end))
            });
            let (dir, _) = found.next()?;
            return found.next().is_none().then_some(dir.as_path());
        }
        let candidates = [
            normalize(&cwd.join(printed)),
            normalize(&self.root.join(printed)),
        ];
        candidates.into_iter().find_map(|candidate| {
            self.packages
                .iter()
                .find(|(dir, _)| *dir == candidate)
                .map(|(dir, _)| dir.as_path())
        })
    }
}

/// `dir` relative to `base` as a `/`-separated string, when under it.
fn relative_from(dir: &Path, base: &Path) -> Option<String> {
    let relative = dir.strip_prefix(base).ok()?;
    Some(relative.to_string_lossy().into_owned())
}

/// Removes `.` and resolves `..` lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The `name` a package's `package.json` gives.
fn package_name(dir: &Path) -> Option<String> {
    let bytes = std::fs::read(dir.join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    manifest.get("name")?.as_str().map(str::to_string)
}

/// The globs of a `package.json`'s `workspaces` (a list, or yarn's
/// `{"packages": [...]}`); `None` when it lists none.
fn npm_globs(manifest: &[u8]) -> Option<Vec<String>> {
    let manifest: serde_json::Value = serde_json::from_slice(manifest).ok()?;
    let workspaces = manifest.get("workspaces")?;
    let list = workspaces
        .as_array()
        .or_else(|| workspaces.get("packages")?.as_array())?;
    let globs: Vec<String> = list
        .iter()
        .filter_map(|g| g.as_str().map(str::to_string))
        .collect();
    (!globs.is_empty()).then_some(globs)
}

/// The globs of a `pnpm-workspace.yaml`'s `packages` list, block
/// (`- "packages/*"` a line) or flow (`["packages/*"]`) style.
fn pnpm_globs(text: &str) -> Vec<String> {
    let unquote = |item: &str| {
        let item = item.split(" #").next().unwrap_or(item).trim();
        item.trim_matches(['"', '\'']).to_string()
    };
    let mut globs = Vec::new();
    let mut in_list = false;
    for line in text.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if let Some(value) = line.strip_prefix("packages:") {
            let value = value.trim();
            if let Some(flow) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                globs.extend(flow.split(',').map(unquote).filter(|g| !g.is_empty()));
            }
            in_list = value.is_empty();
            continue;
        }
        if !line.starts_with([' ', '\t', '-']) {
            in_list = false;
        } else if in_list {
            if let Some(item) = line.trim_start().strip_prefix('-') {
                globs.push(unquote(item));
            }
        }
    }
    globs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_read_as_each_package_manager_prints_them() {
        for (line, mark) in [
            ("> a@1.0.0 test", Some(Mark::Npm { name: "a" })),
            (
                "> @mono/core@1.0.0 test",
                Some(Mark::Npm { name: "@mono/core" }),
            ),
            ("> a", Some(Mark::Bare { name: "a" })),
            ("> vitest run", None),
            ("> ", None),
            (
                "packages/a test$ jest",
                Some(Mark::Dir {
                    dir: "packages/a",
                    rest: "jest",
                    opens: true,
                }),
            ),
            (
                "packages/b test:  RUN  v4.1.12 /x",
                Some(Mark::Dir {
                    dir: "packages/b",
                    rest: " RUN  v4.1.12 /x",
                    opens: false,
                }),
            ),
            (
                "packages/b test:",
                Some(Mark::Dir {
                    dir: "packages/b",
                    rest: "",
                    opens: false,
                }),
            ),
            (
                "[a]:   ✕ sums (3 ms)",
                Some(Mark::Named {
                    name: "a",
                    rest: "  ✕ sums (3 ms)",
                }),
            ),
            (
                "[@s/b]:",
                Some(Mark::Named {
                    name: "@s/b",
                    rest: "",
                }),
            ),
            ("[1/1]⎯", None),
            ("FAIL ./sum.test.js", None),
        ] {
            assert_eq!(Mark::of(line), mark, "{line}");
            if mark.is_some_and(|m| !matches!(m, Mark::Dir { opens: false, .. })) {
                assert!(may_mark(line.as_bytes()), "{line}");
            }
        }
        assert!(!may_mark(b"  at Object.toBe (sum.test.js:4:21)"));
    }

    #[test]
    fn packages_are_listed_from_the_manifests_globs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("package.json", r#"{"name": "mono"}"#),
            (
                "pnpm-workspace.yaml",
                "packages:\n  - 'packages/*'\n  - \"!packages/skip\" # no\nother:\n  - x/*\n",
            ),
            ("packages/a/package.json", r#"{"name": "a"}"#),
            ("packages/skip/package.json", r#"{"name": "skip"}"#),
            ("packages/none/README.md", ""),
            (
                "packages/a/node_modules/dep/package.json",
                r#"{"name": "dep"}"#,
            ),
            ("x/y/package.json", r#"{"name": "y"}"#),
            ("services/long/ledger/package.json", r#"{"name": "ledger"}"#),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        let ws = Workspace::find(&root.join("packages"), root).unwrap();
        assert_eq!(ws.named("a"), Some(root.join("packages/a").as_path()));
        assert_eq!(ws.named("mono"), Some(root));
        for name in ["skip", "dep", "y", "none"] {
            assert_eq!(ws.named(name), None, "{name}");
        }
        assert_eq!(
            ws.at("packages/a", root),
            Some(root.join("packages/a").as_path())
        );
        assert_eq!(ws.at("a", &root.join("packages")), ws.named("a"));
        assert_eq!(ws.at("packages/none", root), None);
        std::fs::write(
            root.join("pnpm-workspace.yaml"),
            "packages: [\"packages/*\", services/**]\n",
        )
        .unwrap();
        let ws = Workspace::find(root, root).unwrap();
        assert_eq!(
            ws.at(".../ledger", root),
            Some(root.join("services/long/ledger").as_path())
        );
        assert_eq!(ws.at(".../none", root), None);
        // npm's and yarn's list, alone or under `packages`.
        std::fs::remove_file(root.join("pnpm-workspace.yaml")).unwrap();
        std::fs::write(
            root.join("package.json"),
            r#"{"workspaces": {"packages": ["x/*"]}}"#,
        )
        .unwrap();
        let ws = Workspace::find(root, root).unwrap();
        assert_eq!(ws.named("y"), Some(root.join("x/y").as_path()));
        std::fs::write(root.join("package.json"), r#"{"name": "plain"}"#).unwrap();
        assert!(Workspace::find(root, root).is_none());
    }
}
