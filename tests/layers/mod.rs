//! The library's layers: every `crate::` path between top-level modules of src/ must go down
//! (or sideways within a layer) in the layer list of ARCHITECTURE.md, and the module graph must
//! have no cycle. Fails naming the offending edge (file and line) or the cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A `crate::` use of module `to` at `file:line`.
#[derive(Clone, Debug)]
struct Use {
    to: String,
    at: String,
}

/// The top-level modules: src/*.rs and src/*/ (lib.rs aside).
fn modules(src: &Path) -> BTreeSet<String> {
    fs::read_dir(src)
        .expect("read src/")
        .map(|e| e.expect("entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            if p.is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "lib").then(|| stem.to_string())
            }
        })
        .collect()
}

/// What lib.rs re-exports at the crate root (`pub use a::b::{X, Y};`): name -> module.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.trim_end_matches(';');
        let module = rest.split("::").next().unwrap_or("").to_string();
        let names = match (rest.find('{'), rest.rfind('}')) {
            (Some(a), Some(b)) => rest[a + 1..b].to_string(),
            _ => rest.rsplit("::").next().unwrap_or("").to_string(),
        };
        for n in names.split(',') {
            let n = n.trim();
            let n = n.rsplit(" as ").next().unwrap_or(n).trim();
            let n = n.rsplit("::").next().unwrap_or(n);
            if !n.is_empty() {
                out.insert(n.to_string(), module.clone());
            }
        }
    }
    out
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first path segment of each item of a `crate::{...}` group (nested braces skipped).
fn group_heads(group: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(ident(group[start..i].trim()));
                start = i + 1;
            }
            _ => {}
        }
    }
    heads.push(ident(group[start..].trim()));
    heads
}

/// Every `crate::` use in the files below `dir`, as (from module, use).
fn uses_in(
    file: &Path,
    from: &str,
    mods: &BTreeSet<String>,
    reexp: &BTreeMap<String, String>,
    out: &mut Vec<(String, Use)>,
) {
    let text = fs::read_to_string(file).expect("read source");
    // Comments (doc links included) are not dependencies.
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let rel = file
        .strip_prefix(ROOT)
        .unwrap_or(file)
        .display()
        .to_string();
    let mut add = |name: &str, pos: usize| {
        let to = if mods.contains(name) {
            name.to_string()
        } else if let Some(m) = reexp.get(name) {
            m.clone()
        } else {
            return;
        };
        if to != from {
            let line = code[..pos].matches('\n').count() + 1;
            out.push((
                from.to_string(),
                Use {
                    to,
                    at: format!("{rel}:{line}"),
                },
            ));
        }
    };
    let mut pos = 0;
    while let Some(i) = code[pos..].find("crate::") {
        let at = pos + i;
        let after = &code[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(group.len(), |(j, _)| j);
            for head in group_heads(&group[..end]) {
                add(head, at);
            }
        } else {
            add(ident(after), at);
        }
        pos = at + "crate::".len();
    }
}

fn rust_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        for e in fs::read_dir(p).expect("read dir") {
            rust_files(&e.expect("entry").path(), out);
        }
    } else if p.is_file() && p.extension().is_some_and(|e| e == "rs") {
        // Unit-test modules in files of their own (`tests.rs`, `*_tests.rs`, compiled only
        // under #[cfg(test)]) build fixtures with whatever layer they need: not edges.
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if stem == "tests" || stem.ends_with("_tests") {
            return;
        }
        out.push(p.to_path_buf());
    }
}

/// The layer list: the lines `N name: module module ...` between `<!-- layers -->` and
/// `<!-- /layers -->` in ARCHITECTURE.md, lowest layer first.
fn layers() -> BTreeMap<String, (usize, String)> {
    let doc = fs::read_to_string(Path::new(ROOT).join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = doc
        .find("<!-- layers -->")
        .expect("a <!-- layers --> block in ARCHITECTURE.md");
    let end = doc.find("<!-- /layers -->").expect("<!-- /layers -->");
    let mut out = BTreeMap::new();
    for line in doc[start..end].lines() {
        let mut words = line.split_whitespace();
        let Some(n) = words.next().and_then(|w| w.parse::<usize>().ok()) else {
            continue;
        };
        let name = words.next().unwrap_or("").trim_end_matches(':').to_string();
        for m in words {
            let prev = out.insert(m.to_string(), (n, name.clone()));
            assert!(
                prev.is_none(),
                "module {m} is listed twice in the layer list"
            );
        }
    }
    out
}

/// One cycle through `start` inside `scc`, as the uses that make it.
fn a_cycle(start: &str, scc: &BTreeSet<String>, g: &BTreeMap<String, Vec<Use>>) -> Vec<Use> {
    fn dfs(
        v: &str,
        start: &str,
        scc: &BTreeSet<String>,
        g: &BTreeMap<String, Vec<Use>>,
        seen: &mut BTreeSet<String>,
        path: &mut Vec<Use>,
    ) -> bool {
        for u in g.get(v).into_iter().flatten() {
            if !scc.contains(&u.to) {
                continue;
            }
            path.push(u.clone());
            if u.to == start || (seen.insert(u.to.clone()) && dfs(&u.to, start, scc, g, seen, path))
            {
                return true;
            }
            path.pop();
        }
        false
    }
    let mut path = Vec::new();
    dfs(start, start, scc, g, &mut BTreeSet::new(), &mut path);
    path
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(mods: &BTreeSet<String>, g: &BTreeMap<String, Vec<Use>>) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, Vec<Use>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        let i = t.index.len();
        t.index.insert(v.to_string(), i);
        t.low.insert(v.to_string(), i);
        t.stack.push(v.to_string());
        t.on.insert(v.to_string());
        let g = t.g;
        for u in g.get(v).into_iter().flatten() {
            if !t.index.contains_key(&u.to) {
                visit(t, &u.to);
                let l = t.low[&u.to].min(t.low[v]);
                t.low.insert(v.to_string(), l);
            } else if t.on.contains(&u.to) {
                let l = t.index[&u.to].min(t.low[v]);
                t.low.insert(v.to_string(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = w == v;
                comp.insert(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for m in mods {
        if !t.index.contains_key(m) {
            visit(&mut t, m);
        }
    }
    t.out
}

#[test]
fn modules_form_layers_without_cycles() {
    let src = Path::new(ROOT).join("src");
    let mods = modules(&src);
    let reexp = reexports(&fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let mut uses = Vec::new();
    for m in &mods {
        let mut files = Vec::new();
        rust_files(&src.join(m), &mut files);
        rust_files(&src.join(format!("{m}.rs")), &mut files);
        for f in files {
            uses_in(&f, m, &mods, &reexp, &mut uses);
        }
    }
    assert!(
        uses.len() > 50,
        "the scan found only {} uses: is it still parsing src/?",
        uses.len()
    );
    let mut g: BTreeMap<String, Vec<Use>> = BTreeMap::new();
    for (from, u) in uses {
        g.entry(from).or_default().push(u);
    }

    let mut problems = Vec::new();
    for comp in cycles(&mods, &g) {
        let start = comp.iter().next().expect("non-empty");
        let cycle = a_cycle(start, &comp, &g);
        let mut text = format!("cycle between modules {comp:?}: {start}");
        for u in &cycle {
            text += &format!(" -> {} ({})", u.to, u.at);
        }
        problems.push(text);
    }

    let layers = layers();
    for m in &mods {
        if !layers.contains_key(m) {
            problems.push(format!(
                "module {m} is not in ARCHITECTURE.md's layer list: add it to its layer"
            ));
        }
    }
    for m in layers.keys() {
        if !mods.contains(m) {
            problems.push(format!(
                "ARCHITECTURE.md's layer list names {m}, which is not a module of src/"
            ));
        }
    }
    for (from, us) in &g {
        let Some(&(lf, ref nf)) = layers.get(from) else {
            continue;
        };
        let mut reported = BTreeSet::new();
        for u in us {
            let Some(&(lt, ref nt)) = layers.get(&u.to) else {
                continue;
            };
            if lt > lf && reported.insert(&u.to) {
                problems.push(format!(
                    "{from} (layer {lf} {nf}) uses {} (layer {lt} {nt}), a layer above it, at {}",
                    u.to, u.at
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The check itself finds a cycle and names it (a checker that cannot fail checks nothing).
#[test]
fn the_cycle_check_names_a_cycle() {
    let mods: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let edge = |to: &str, at: &str| Use {
        to: to.into(),
        at: at.into(),
    };
    let g: BTreeMap<String, Vec<Use>> = [
        ("a".to_string(), vec![edge("b", "a.rs:1")]),
        ("b".to_string(), vec![edge("c", "b.rs:2")]),
        ("c".to_string(), vec![edge("a", "c.rs:3")]),
    ]
    .into_iter()
    .collect();
    let found = cycles(&mods, &g);
    assert_eq!(found.len(), 1);
    let path = a_cycle("a", &found[0], &g);
    let names: Vec<&str> = path.iter().map(|u| u.to.as_str()).collect();
    assert_eq!(names, ["b", "c", "a"]);
    assert_eq!(path[2].at, "c.rs:3");

    let mut uses = Vec::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("x.rs");
    fs::write(
        &f,
        "use crate::b::X;\n// crate::c in a comment\nuse crate::{Error, c::{self, Y}};\n",
    )
    .expect("write");
    let reexp: BTreeMap<String, String> = [("Error".to_string(), "err".to_string())].into();
    let mods: BTreeSet<String> = ["a", "b", "c", "err"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    uses_in(&f, "a", &mods, &reexp, &mut uses);
    let to: Vec<&str> = uses.iter().map(|(_, u)| u.to.as_str()).collect();
    assert_eq!(to, ["b", "err", "c"]);
}
