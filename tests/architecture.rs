//! The shape of `src/`: no import circle between its files, no file of the scheduler over 400 lines, no
//! function over 80 lines. Each check has a self-test proving it can fail.
//!
//! Reads every file of each crate in `src/` (the library from `src/lib.rs`, the admin binary from
//! `src/main.rs`, the bench from `src/bin/xxl-job-bench/main.rs`, each a graph of its own), collects the
//! paths it names (`use` trees, `crate::…`, `super::…`, `self::…` and paths through its own child
//! modules, in code as well as in `use`), resolves each to the file that defines the module, and fails on
//! any circle between files, printing it. A child naming its ancestors through `super::` does not count:
//! that is how a module uses the items its parent gives it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[test]
fn no_import_circle_between_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut roots = vec![src.join("lib.rs"), src.join("main.rs")];
    for entry in std::fs::read_dir(src.join("bin")).expect("src/bin") {
        let path = entry.expect("src/bin entry").path();
        roots.push(if path.is_dir() { path.join("main.rs") } else { path });
    }
    let mut failures = Vec::new();
    for root in roots {
        let graph = Crate::load(&root);
        for circle in graph.circles() {
            let end = circle.iter().skip(1).position(|f| *f == circle[0]).map_or(circle.len(), |p| p + 2);
            let names = |files: &[PathBuf]| files.iter().map(|f| relative(&src, f)).collect::<Vec<_>>();
            let mut line = format!("{}: {}", relative(&src, &root), names(&circle[..end]).join(" -> "));
            if end < circle.len() {
                line += &format!(" (also in this knot: {})", names(&circle[end..]).join(", "));
            }
            failures.push(line);
        }
    }
    assert!(failures.is_empty(), "import circles between files:\n{}", failures.join("\n"));
}

/// The circle finder itself can fail: two files naming each other are found.
#[test]
fn finds_a_circle() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(dir.join("a.rs"), "use crate::b::B;\npub struct A;\n").unwrap();
    std::fs::write(dir.join("b.rs"), "pub struct B;\nfn f() -> crate::a::A { crate::a::A }\n").unwrap();
    let circles = Crate::load(&dir.join("lib.rs")).circles();
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert_eq!(circles[0].len(), 3, "{circles:?}");
    assert_eq!(circles[0][0], circles[0][2], "{circles:?}");
}

/// A child's `super::` and a test module's `use super::*` make no circle; a parent reaching into a
/// child that reaches a sibling which reaches back does.
#[test]
fn super_from_a_child_is_not_a_circle() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    std::fs::create_dir_all(dir.join("p")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod p;\nmod q;\n").unwrap();
    std::fs::write(dir.join("p/mod.rs"), "mod c;\npub use c::C;\npub struct P;\n").unwrap();
    std::fs::write(
        dir.join("p/c.rs"),
        "use super::P;\npub struct C(P);\n#[cfg(test)]\nmod tests { use super::*; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("q.rs"), "// crate::p::P in a comment\nconst S: &str = \"crate::p::P\";\n")
        .unwrap();
    assert!(Crate::load(&dir.join("lib.rs")).circles().is_empty());
    std::fs::write(dir.join("q.rs"), "use crate::p::C;\n").unwrap();
    std::fs::write(dir.join("p/c.rs"), "use super::P;\npub struct C(P);\nfn g(_: crate::q::Q) {}\n").unwrap();
    std::fs::write(dir.join("q.rs"), "use crate::p::C;\npub struct Q;\n").unwrap();
    let circles = Crate::load(&dir.join("lib.rs")).circles();
    assert_eq!(circles.len(), 1, "{circles:?}");
}

fn relative(src: &Path, file: &Path) -> String {
    file.strip_prefix(src).unwrap_or(file).display().to_string()
}

/// One crate: its modules (path → defining file) and the file-to-file edges.
struct Crate {
    modules: BTreeMap<Vec<String>, PathBuf>,
    edges: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

/// A path named in a file, with the module it was named from.
struct Named {
    from: Vec<String>,
    path: Vec<String>,
}

impl Crate {
    fn load(root: &Path) -> Crate {
        let mut modules = BTreeMap::new();
        let mut named: Vec<(PathBuf, Named)> = Vec::new();
        let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
        let mut pending =
            vec![(root.to_path_buf(), vec!["crate".to_string()], root.parent().unwrap().to_path_buf())];
        while let Some((file, module, child_dir)) = pending.pop() {
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let scan = scan(&tokens(&text), &module);
            for inline in &scan.inline_modules {
                modules.insert(inline.clone(), file.clone());
                children
                    .entry(inline[..inline.len() - 1].to_vec())
                    .or_default()
                    .insert(inline.last().unwrap().clone());
            }
            modules.insert(module.clone(), file.clone());
            for (parent, name) in scan.declared {
                children.entry(parent.clone()).or_default().insert(name.clone());
                let dir = parent[module.len()..].iter().fold(child_dir.clone(), |dir, seg| dir.join(seg));
                let flat = dir.join(format!("{name}.rs"));
                let (child, grandchildren) = if flat.exists() {
                    (flat, dir.join(&name))
                } else {
                    (dir.join(&name).join("mod.rs"), dir.join(&name))
                };
                let mut path = parent.clone();
                path.push(name);
                pending.push((child, path, grandchildren));
            }
            named.extend(scan.named.into_iter().map(|n| (file.clone(), n)));
        }
        let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        for (file, n) in named {
            let Some(target) = resolve(&n, &children) else { continue };
            // Longest prefix that is a module: the rest are items inside it.
            let Some(len) = (1..=target.len()).rev().find(|len| modules.contains_key(&target[..*len])) else {
                continue;
            };
            let to = &modules[&target[..len]];
            // A module is part of its ancestors: naming their items is no circle, however spelled.
            let ancestor = n.from.starts_with(&target[..len]);
            if *to != file && !ancestor {
                edges.entry(file.clone()).or_default().insert(to.clone());
            }
        }
        Crate { modules, edges }
    }

    /// Every strongly connected group of more than one file: one circle through it (first file repeated
    /// at its end), then the group's other files.
    fn circles(&self) -> Vec<Vec<PathBuf>> {
        let files: BTreeSet<PathBuf> = self.modules.values().cloned().collect();
        let reach = |from: &PathBuf| -> BTreeSet<PathBuf> {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from.clone()];
            while let Some(f) = stack.pop() {
                for next in self.edges.get(&f).into_iter().flatten() {
                    if seen.insert(next.clone()) {
                        stack.push(next.clone());
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<PathBuf, BTreeSet<PathBuf>> =
            files.iter().map(|f| (f.clone(), reach(f))).collect();
        let mut done = BTreeSet::new();
        let mut circles = Vec::new();
        for file in &files {
            if done.contains(file) || !reaches[file].contains(file) {
                continue;
            }
            let group: BTreeSet<PathBuf> =
                reaches[file].iter().filter(|g| reaches[*g].contains(file)).cloned().collect();
            done.extend(group.iter().cloned());
            let mut circle = self.cycle_through(file, &group);
            // The rest of the group, so one run names every file to untangle.
            let rest: Vec<PathBuf> = group.iter().filter(|g| !circle.contains(g)).cloned().collect();
            circle.extend(rest);
            circles.push(circle);
        }
        circles
    }

    /// A shortest circle from `file` back to itself inside its group, for the message.
    fn cycle_through(&self, file: &PathBuf, group: &BTreeSet<PathBuf>) -> Vec<PathBuf> {
        let mut previous: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([file.clone()]);
        while let Some(f) = queue.pop_front() {
            for next in self.edges.get(&f).into_iter().flatten().filter(|n| group.contains(*n)) {
                if next == file {
                    let mut back = vec![file.clone(), f.clone()];
                    while back.last() != Some(file) {
                        back.push(previous[back.last().unwrap()].clone());
                    }
                    back.reverse();
                    return back;
                }
                if !previous.contains_key(next) {
                    previous.insert(next.clone(), f.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        vec![file.clone()]
    }
}

/// The absolute module path a named path points into.
fn resolve(n: &Named, children: &BTreeMap<Vec<String>, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut segments = n.path.iter().peekable();
    let first = segments.peek()?.as_str();
    let mut base = match first {
        "crate" => {
            segments.next();
            vec!["crate".to_string()]
        }
        "self" => {
            segments.next();
            n.from.clone()
        }
        "super" => n.from.clone(),
        name if children.get(&n.from).is_some_and(|c| c.contains(name)) => n.from.clone(),
        _ => return None,
    };
    while segments.peek().is_some_and(|s| *s == "super") {
        segments.next();
        base.pop();
    }
    base.extend(segments.cloned());
    Some(base)
}

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Rust tokens without comments, strings and character literals (which may mention paths).
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('#') || next == Some('"'))
            && raw_string_start(&chars, i).is_some()
        {
            let (hashes, body) = raw_string_start(&chars, i).unwrap();
            let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            i = body;
            while i < chars.len() && !chars[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
        } else if c == 'b' && next == Some('"') {
            i = skip_string(&chars, i + 1);
        } else if c == '"' {
            i = skip_string(&chars, i);
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push(Token::Ident(word.trim_start_matches("r#").to_string()));
        } else if c == ':' && next == Some(':') {
            out.push(Token::PathSep);
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    (chars.get(j) == Some(&'"')).then_some((j - i - 1, j + 1))
}

fn skip_string(chars: &[char], open: usize) -> usize {
    let mut i = open + 1;
    while i < chars.len() && chars[i] != '"' {
        i += if chars[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

struct Scan {
    /// `mod name;` declarations: (the module declaring it, the name).
    declared: Vec<(Vec<String>, String)>,
    /// `mod name { … }` modules written inside the file.
    inline_modules: Vec<Vec<String>>,
    named: Vec<Named>,
}

/// Walks a file's tokens, keeping track of the inline module each token is in.
fn scan(tokens: &[Token], module: &[String]) -> Scan {
    let ident = |i: usize| match tokens.get(i) {
        Some(Token::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    let mut scan = Scan { declared: Vec::new(), inline_modules: Vec::new(), named: Vec::new() };
    let mut current = module.to_vec();
    // Brace depth at which each open inline module closes.
    let mut inline_depths: Vec<usize> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth -= 1;
                if inline_depths.last() == Some(&depth) {
                    inline_depths.pop();
                    current.pop();
                }
            }
            Token::Ident(word) if word == "mod" && ident(i + 1).is_some() => {
                let name = ident(i + 1).unwrap().to_string();
                if tokens.get(i + 2) == Some(&Token::Punct(';')) {
                    scan.declared.push((current.clone(), name));
                    i += 3;
                    continue;
                }
                if tokens.get(i + 2) == Some(&Token::Punct('{')) {
                    current.push(name);
                    scan.inline_modules.push(current.clone());
                    inline_depths.push(depth);
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Token::Ident(word) if word == "use" => {
                let mut end = i + 1;
                while end < tokens.len() && tokens[end] != Token::Punct(';') {
                    end += 1;
                }
                for path in use_tree(&tokens[i + 1..end.min(tokens.len())], &[]) {
                    scan.named.push(Named { from: current.clone(), path });
                }
                i = end + 1;
                continue;
            }
            Token::Ident(first)
                if tokens.get(i + 1) == Some(&Token::PathSep)
                    && tokens.get(i.wrapping_sub(1)) != Some(&Token::PathSep) =>
            {
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while tokens.get(j) == Some(&Token::PathSep) {
                    match ident(j + 1) {
                        Some(seg) => path.push(seg.to_string()),
                        None => break,
                    }
                    j += 2;
                }
                scan.named.push(Named { from: current.clone(), path });
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

/// The paths of one `use` tree (`a::{b, c::{d, *}}` → `a::b`, `a::c::d`, `a::c`).
fn use_tree(tokens: &[Token], prefix: &[String]) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut path = prefix.to_vec();
    let mut i = 0;
    // A leading `::` names an external crate.
    if tokens.first() == Some(&Token::PathSep) && prefix.is_empty() {
        return paths;
    }
    while i < tokens.len() {
        match &tokens[i] {
            Token::Ident(word) if word == "as" => break,
            Token::Ident(seg) => path.push(seg.clone()),
            Token::Punct('{') => {
                let mut depth = 0;
                let mut start = i + 1;
                for j in i..tokens.len() {
                    match tokens[j] {
                        Token::Punct('{') => depth += 1,
                        Token::Punct('}') => {
                            depth -= 1;
                            if depth == 0 {
                                paths.extend(use_tree(&tokens[start..j], &path));
                                break;
                            }
                        }
                        Token::Punct(',') if depth == 1 => {
                            paths.extend(use_tree(&tokens[start..j], &path));
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return paths;
            }
            _ => {}
        }
        i += 1;
    }
    if path.len() > prefix.len() || !path.is_empty() {
        paths.push(path);
    }
    paths
}

/// The scheduler stays a house one can find one's way in: no file of it over [`SCHEDULER_FILE_LINES`].
#[test]
fn no_scheduler_file_over_400_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long: Vec<String> = long_files(&src.join("scheduler"), SCHEDULER_FILE_LINES)
        .into_iter()
        .map(|(lines, file)| format!("  {lines} {}", relative(&src, &file)))
        .collect();
    assert!(
        long.is_empty(),
        "files of src/scheduler over {SCHEDULER_FILE_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// No function of `src/` over [`FUNCTION_LINES`] lines: a longer one is cut into named steps.
#[test]
fn no_function_over_80_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long: Vec<String> = long_functions(&src, FUNCTION_LINES)
        .into_iter()
        .map(|f| format!("  {} {}:{} {}", f.lines, relative(&src, &f.file), f.line, f.name))
        .collect();
    assert!(
        long.is_empty(),
        "functions over {FUNCTION_LINES} lines (from `fn` to the closing brace), longest first:\n{}",
        long.join("\n")
    );
}

/// The file check can fail: one line over the limit is found, the limit itself is not, in any folder.
#[test]
fn finds_a_long_file() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    std::fs::create_dir_all(dir.join("dispatch")).unwrap();
    std::fs::write(dir.join("mod.rs"), "//\n".repeat(SCHEDULER_FILE_LINES)).unwrap();
    std::fs::write(dir.join("dispatch/check.rs"), "//\n".repeat(SCHEDULER_FILE_LINES + 1)).unwrap();
    std::fs::write(dir.join("notes.md"), "-\n".repeat(SCHEDULER_FILE_LINES + 1)).unwrap();
    assert_eq!(
        long_files(dir, SCHEDULER_FILE_LINES),
        [(SCHEDULER_FILE_LINES + 1, dir.join("dispatch/check.rs"))]
    );
}

/// The function check can fail: it measures from the `fn` line to the brace that closes the body at the
/// `fn`'s indentation, whatever the signature's length and qualifiers, and passes over declarations and
/// one-line bodies.
#[test]
fn finds_a_long_function() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let body = |lines: usize| "        let _ = 1;\n".repeat(lines);
    let text = format!(
        "fn short() -> u8 {{ 1 }}\n\
         trait T {{\n    fn declared(&self);\n}}\n\
         impl S {{\n    pub(crate) async fn exact(\n        a: u8,\n    ) -> u8 {{\n{}        a\n    }}\n\n\
         \x20   pub const unsafe fn over() {{\n{}        if true {{\n        }}\n    }}\n}}\n",
        body(FUNCTION_LINES - 5),
        body(FUNCTION_LINES - 3),
    );
    std::fs::write(dir.join("lib.rs"), text).unwrap();
    let found: Vec<(usize, usize, String)> =
        long_functions(dir, FUNCTION_LINES - 1).into_iter().map(|f| (f.lines, f.line, f.name)).collect();
    let over_start = 6 + FUNCTION_LINES + 1;
    assert_eq!(
        found,
        [(FUNCTION_LINES + 1, over_start, "over".to_string()), (FUNCTION_LINES, 6, "exact".to_string())]
    );
    assert_eq!(long_functions(dir, FUNCTION_LINES).len(), 1);
}

const SCHEDULER_FILE_LINES: usize = 400;
const FUNCTION_LINES: usize = 80;

/// Every `.rs` file under `dir` longer than `limit` lines, as (lines, file), longest first.
fn long_files(dir: &Path, limit: usize) -> Vec<(usize, PathBuf)> {
    let mut long: Vec<(usize, PathBuf)> = rust_files(dir)
        .into_iter()
        .map(|file| (std::fs::read_to_string(&file).unwrap().lines().count(), file))
        .filter(|(lines, _)| *lines > limit)
        .collect();
    long.sort_by(|a, b| b.cmp(a));
    long
}

/// A function and its length, from its `fn` line to its closing brace.
struct Function {
    lines: usize,
    file: PathBuf,
    /// 1-based, of the `fn` line.
    line: usize,
    name: String,
}

/// Every function under `dir` longer than `limit` lines, longest first. Read as rustfmt lays code out:
/// the body opens on the first line after the `fn` that ends with `{` and closes on the next line
/// starting with `}` at the `fn`'s indentation.
fn long_functions(dir: &Path, limit: usize) -> Vec<Function> {
    let mut long = Vec::new();
    for file in rust_files(dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        for (i, line) in lines.iter().enumerate() {
            let Some((indent, name)) = fn_line(line) else { continue };
            let Some(open) = (i..lines.len()).find(|&j| lines[j].trim_end().ends_with(['{', ';', '}']))
            else {
                continue;
            };
            // A declaration without a body, or a body on one line.
            if !lines[open].trim_end().ends_with('{') {
                continue;
            }
            let close = (open + 1..lines.len())
                .find(|&k| lines[k].strip_prefix(indent).is_some_and(|rest| rest.starts_with('}')))
                .unwrap_or(lines.len());
            let length = close - i + 1;
            if length > limit {
                long.push(Function {
                    lines: length,
                    file: file.clone(),
                    line: i + 1,
                    name: name.to_string(),
                });
            }
        }
    }
    long.sort_by(|a, b| (b.lines, &b.file, b.line).cmp(&(a.lines, &a.file, a.line)));
    long
}

/// The indentation and name of a line that starts a function: `[pub[(…)]] [const] [async] [unsafe]
/// [extern "C"] fn name`.
fn fn_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start();
    let indent = &line[..line.len() - rest.len()];
    let mut rest = rest;
    if let Some(after) = rest.strip_prefix("pub") {
        let after = match after.strip_prefix('(') {
            Some(inside) => &inside[inside.find(')')? + 1..],
            None => after,
        };
        rest = word_gap(after)?;
    }
    for qualifier in ["const", "async", "unsafe"] {
        if let Some(after) = rest.strip_prefix(qualifier).and_then(word_gap) {
            rest = after;
        }
    }
    if let Some(after) = rest.strip_prefix("extern").and_then(word_gap) {
        rest = word_gap(after.strip_prefix("\"C\"")?)?;
    }
    let rest = word_gap(rest.strip_prefix("fn")?)?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    (end > 0).then(|| (indent, &rest[..end]))
}

/// `text` after the whitespace it must start with, or `None` if it starts with none.
fn word_gap(text: &str) -> Option<&str> {
    let rest = text.trim_start();
    (rest.len() < text.len()).then_some(rest)
}

/// Every `.rs` file under `dir`, in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
