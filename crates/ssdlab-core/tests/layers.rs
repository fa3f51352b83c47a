//! The core's modules form layers: each imports only modules below it, so there is no import
//! circle, at the level of the top modules (`block`, `device`, …) and of their own modules
//! (`block::queue`, `block::iosched`, …). The test reads the sources, as a reviewer would:
//! every `crate::`, `super::` and `self::` path names a module the file depends on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top modules from the bottom up; a module may use only those before it (and itself).
/// `docs/architecture.md` draws the same stack.
const LAYERS: &[&str] = &[
    "engine", "error", "net", "io", "metrics", "report", "progress", "cpu", "workload", "device", "block", "fs", "pagecache", "file",
    "host", "array", "remap", "target", "sim", "schema",
];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a source file defines, as its path parts (`src/block/queue.rs` → block, queue).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under src").with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The text without comments, strings and the unit tests at its end (`#[cfg(test)] mod …`),
/// which may use anything.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Every module path a file's code names: `crate::a::b…`, `super::…` and `self::…` paths,
/// with `use x::{a, b::c}` groups expanded, resolved to absolute module paths.
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    // Expand one level of `prefix::{a, b::c}` groups into `prefix::a`, `prefix::b::c`.
    let mut text = code.to_string();
    let mut expanded = String::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(pos) = code[i..].find("::{") {
        let open = i + pos + 2;
        let start = code[..i + pos].rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).map_or(0, |s| s + 1);
        let prefix = &code[start..i + pos];
        let mut depth = 0;
        let mut close = open;
        for (k, &c) in bytes.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        for item in code[open + 1..close].split(',') {
            let item = item.trim().trim_start_matches('{').trim_end_matches('}');
            if !item.is_empty() && prefix.starts_with(|c: char| c.is_alphabetic()) {
                expanded.push_str(&format!(" {prefix}::{item} "));
            }
        }
        i = close.max(open + 1);
    }
    text.push_str(&expanded);
    let mut out = Vec::new();
    let words: Vec<&str> = text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).collect();
    for w in words {
        let parts: Vec<&str> = w.split("::").filter(|p| !p.is_empty()).collect();
        let Some(&first) = parts.first() else { continue };
        let base: Vec<String> = match first {
            "crate" => Vec::new(),
            "self" => module.to_vec(),
            "super" => {
                let ups = parts.iter().take_while(|p| **p == "super").count();
                module[..module.len().saturating_sub(ups)].to_vec()
            }
            _ => continue,
        };
        let rest: Vec<String> = parts.iter().skip_while(|p| matches!(**p, "crate" | "self" | "super")).map(|p| p.to_string()).collect();
        let mut path = base;
        path.extend(rest);
        out.push(path);
    }
    out
}

/// The module graph at `depth` (1: top modules; 2: their modules), keeping only names that
/// are modules of the crate.
fn graph(src: &Path, depth: usize) -> Graph {
    let mut files = Vec::new();
    sources(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let unit = |m: &[String]| -> Option<String> { (!m.is_empty()).then(|| m.iter().take(depth).cloned().collect::<Vec<_>>().join("::")) };
    let units: BTreeSet<String> = modules.iter().filter_map(|m| unit(m)).collect();
    let mut g = Graph::new();
    for f in &files {
        let module = module_of(src, f);
        let Some(from) = unit(&module) else { continue };
        let code = code_of(&std::fs::read_to_string(f).expect("a source file"));
        let edges = g.entry(from.clone()).or_default();
        for path in named_paths(&module, &code) {
            // The longest prefix of the path that is a unit of the graph.
            let to = (1..=path.len().min(depth)).rev().map(|n| path[..n].join("::")).find(|u| units.contains(u));
            // A module naming its own modules (declaring or re-exporting them) depends on
            // nothing: they depend on it.
            if let Some(to) = to.filter(|t| *t != from && !t.starts_with(&format!("{from}::"))) {
                edges.insert(to);
            }
        }
    }
    g
}

/// The graph's circles: its strongly connected components of more than one module.
fn circles(g: &Graph) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iteratively deep enough for a crate's modules.
    struct State<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut c = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                c.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                s.out.push(c);
            }
        }
    }
    let mut s = State { g, index: BTreeMap::new(), low: BTreeMap::new(), stack: vec![], on: BTreeSet::new(), next: 0, out: vec![] };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_top_modules_form_layers_without_a_circle() {
    let g = graph(&src(), 1);
    assert_eq!(circles(&g), Vec::<Vec<String>>::new(), "import circles among the top modules: {g:#?}");
    // Each module is in the stack, and uses only modules below it.
    for (from, tos) in &g {
        let rank = |m: &str| LAYERS.iter().position(|l| *l == m).unwrap_or_else(|| panic!("module {m} is not in LAYERS"));
        for to in tos {
            assert!(rank(to) < rank(from), "{from} uses {to}, which is not below it in LAYERS {LAYERS:?}");
        }
    }
    assert_eq!(g.len(), LAYERS.len(), "LAYERS names {:?}, the crate has {:?}", LAYERS, g.keys().collect::<Vec<_>>());
}

#[test]
fn the_modules_inside_each_top_module_have_no_circle() {
    let g = graph(&src(), 2);
    let c = circles(&g);
    assert!(c.is_empty(), "import circles among modules: {c:?}");
}

/// The checker finds what it must: a back-import planted in a copy of a small tree is a
/// circle, and `super::` paths count.
#[test]
fn a_planted_back_import_is_found() {
    let dir = std::env::temp_dir().join(format!("ssdlab-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("low")).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod high;\npub mod low;\n").unwrap();
    std::fs::write(dir.join("high.rs"), "use crate::low::{Thing, other::Other};\n").unwrap();
    std::fs::write(dir.join("low/mod.rs"), "pub mod other;\npub struct Thing;\n").unwrap();
    std::fs::write(dir.join("low/other.rs"), "use super::Thing; // a comment naming crate::high is no import\n").unwrap();
    assert!(circles(&graph(&dir, 1)).is_empty());
    assert!(circles(&graph(&dir, 2)).is_empty());
    // The plant: the lower module names the higher one.
    std::fs::write(dir.join("low/other.rs"), "use super::Thing;\nfn f() -> crate::high::Up { todo!() }\n").unwrap();
    assert_eq!(circles(&graph(&dir, 1)), vec![vec!["high".to_string(), "low".to_string()]]);
    // Inside a module: `super::` paths between two of its modules.
    std::fs::write(dir.join("low/mod.rs"), "pub mod other;\npub struct Thing;\nuse self::other::O;\n").unwrap();
    std::fs::write(dir.join("low/other.rs"), "use super::Thing;\npub struct O;\n").unwrap();
    assert_eq!(circles(&graph(&dir, 2)), Vec::<Vec<String>>::new(), "low → low::other is not a circle");
    std::fs::create_dir_all(dir.join("low/deep")).unwrap();
    std::fs::write(dir.join("low/deep/mod.rs"), "use super::other::O;\n").unwrap();
    std::fs::write(dir.join("low/other.rs"), "use super::Thing;\nuse super::deep::D;\npub struct O;\n").unwrap();
    assert_eq!(circles(&graph(&dir, 2)), vec![vec!["low::deep".to_string(), "low::other".to_string()]]);
    std::fs::remove_dir_all(&dir).unwrap();
}
