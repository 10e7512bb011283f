//! The book under `docs/` (issue 23). Its reference pages are the repository's own files,
//! included by mdBook, so that each text has one source: every error code
//! (`crates/kernel/src/codes/*.md`) and every driver crate's README has a page, and every
//! include names a file, and an anchor, that exist. Once the book is built (`scripts/book`
//! builds it and runs the ignored test here), every internal link and anchor of its HTML, and
//! every link of `README.md` into it, resolves.
//!
//! The link check is ours rather than mdbook-linkcheck's: it reads the HTML mdBook wrote (so it
//! sees the ids mdBook gave the headings, and what the includes brought in) and costs no build.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages every code file and every driver README must have, as (page under `docs/src`,
/// the file it must include, relative to the repository root).
fn expected_pages(root: &Path) -> Vec<(String, String)> {
    let mut pages = Vec::new();
    for code in names_in(&root.join("crates/kernel/src/codes"), ".md") {
        pages.push((
            format!("reference/codes/{code}.md"),
            format!("crates/kernel/src/codes/{code}.md"),
        ));
    }
    for driver in names_in(&root.join("crates/drivers"), "") {
        if root
            .join("crates/drivers")
            .join(&driver)
            .join("README.md")
            .is_file()
        {
            pages.push((
                format!("reference/drivers/{driver}.md"),
                format!("crates/drivers/{driver}/README.md"),
            ));
        }
    }
    pages
}

/// The names in `dir` ending in `suffix` (which is taken off), sorted.
fn names_in(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_suffix(suffix).map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// What is missing for the code files and driver READMEs under `root` to have their pages: the
/// page, its include of the file, or its entry in `SUMMARY.md`.
fn missing_pages(root: &Path) -> Vec<String> {
    let src = root.join("docs/src");
    let summary = fs::read_to_string(src.join("SUMMARY.md")).unwrap_or_default();
    let mut problems = Vec::new();
    for (page, file) in expected_pages(root) {
        let Ok(text) = fs::read_to_string(src.join(&page)) else {
            problems.push(format!("{file} has no page: docs/src/{page} is missing"));
            continue;
        };
        let depth = page.matches('/').count() + 2;
        let include = format!("{{{{#include {}{file}}}}}", "../".repeat(depth));
        if !text.contains(&include) {
            problems.push(format!(
                "docs/src/{page} does not include {file} ({include})"
            ));
        }
        if !summary.contains(&format!("]({page})")) {
            problems.push(format!("docs/src/SUMMARY.md does not list {page}"));
        }
    }
    problems
}

/// Every `{{#include FILE}}` and `{{#include FILE:ANCHOR}}` of the pages under `src` whose file
/// or anchor does not exist, or whose anchor holds nothing. mdBook only logs these and goes on
/// with the page, so the book would build with a hole in it.
fn broken_includes(src: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for page in files_in(src, "md") {
        let text = fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(src).unwrap().display().to_string();
        for include in text.split("{{#include ").skip(1) {
            let Some((target, _)) = include.split_once("}}") else {
                problems.push(format!("{name}: an unclosed {{{{#include"));
                continue;
            };
            let (file, anchor) = match target.split_once(':') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target, None),
            };
            let path = page.parent().unwrap().join(file);
            let Ok(included) = fs::read_to_string(&path) else {
                problems.push(format!("{name}: includes {file}, which does not exist"));
                continue;
            };
            if let Some(anchor) = anchor {
                let body = anchored(&included, anchor);
                match body {
                    None => problems.push(format!("{name}: {file} has no anchor `{anchor}`")),
                    Some(body) if body.trim().is_empty() => {
                        problems.push(format!("{name}: the anchor `{anchor}` of {file} is empty"));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    problems
}

/// The lines between `ANCHOR: name` and `ANCHOR_END: name`, as mdBook takes them; `None` when
/// the anchor does not open and close.
fn anchored(text: &str, name: &str) -> Option<String> {
    let is = |line: &str, marker: &str| {
        line.split_once(marker)
            .is_some_and(|(_, rest)| rest.split_whitespace().next() == Some(name))
    };
    let start = text.lines().position(|line| is(line, "ANCHOR: "))?;
    let lines: Vec<&str> = text.lines().skip(start + 1).collect();
    let end = lines.iter().position(|line| is(line, "ANCHOR_END: "))?;
    Some(lines[..end].join("\n"))
}

/// The files under `dir` with extension `ext`, sorted.
fn files_in(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|found| found == ext) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The values of the attribute `attr` (`href`, `id`, …) in `html`.
fn attribute_values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let needle = format!(" {attr}=\"");
    html.split(needle.as_str())
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(value, _)| value))
        .collect()
}

/// `%20`-style escapes decoded (mdBook writes ids and links of non-ASCII headings encoded).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `base.join(relative)` with `.` and `..` resolved; `None` when it climbs above `top`.
fn resolve(base: &Path, relative: &str, top: &Path) -> Option<PathBuf> {
    let mut path = base.to_path_buf();
    for component in Path::new(relative).components() {
        match component {
            Component::ParentDir => {
                if path == top {
                    return None;
                }
                path.pop();
            }
            Component::Normal(part) => path.push(part),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(path)
}

/// Whether a link leaves the book: a scheme (`https:`, `mailto:`), or a protocol-relative URL.
fn is_external(link: &str) -> bool {
    link.starts_with("//")
        || link.split_once(':').is_some_and(|(scheme, _)| {
            scheme.starts_with(|c: char| c.is_ascii_lowercase())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-".contains(c))
        })
}

/// The ids of the HTML file at `path`, read once.
struct Ids(std::collections::HashMap<PathBuf, HashSet<String>>);

impl Ids {
    fn of(&mut self, path: &Path) -> &HashSet<String> {
        self.0.entry(path.to_path_buf()).or_insert_with(|| {
            let html = fs::read_to_string(path).unwrap_or_default();
            attribute_values(&html, "id")
                .into_iter()
                .chain(attribute_values(&html, "name"))
                .map(percent_decoded)
                .collect()
        })
    }
}

/// Every internal link of the built book under `book` that does not resolve: its file missing,
/// or its `#anchor` not an id of that file. Also any include mdBook left unexpanded.
fn broken_links(book: &Path) -> Vec<String> {
    let mut ids = Ids(std::collections::HashMap::new());
    let mut problems = BTreeSet::new();
    for page in files_in(book, "html") {
        let html = fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(book).unwrap().display().to_string();
        if html.contains("{{#") {
            problems.insert(format!("{name}: an mdBook directive was left as text"));
        }
        let links = attribute_values(&html, "href")
            .into_iter()
            .chain(attribute_values(&html, "src"));
        for link in links {
            if is_external(link) {
                continue;
            }
            let link = percent_decoded(link);
            let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let path = path.split_once('?').map_or(path, |(path, _)| path);
            let target = if path.is_empty() {
                Some(page.clone())
            } else {
                resolve(page.parent().unwrap(), path, book)
            };
            let target = match target {
                Some(target) if target.is_dir() => target.join("index.html"),
                Some(target) => target,
                None => {
                    problems.insert(format!("{name}: `{link}` leaves the book"));
                    continue;
                }
            };
            if !target.is_file() {
                problems.insert(format!("{name}: `{link}`: no such file"));
            } else if !anchor.is_empty() && !ids.of(&target).contains(anchor) {
                problems.insert(format!("{name}: `{link}`: no id `{anchor}` there"));
            }
        }
    }
    problems.into_iter().collect()
}

/// The targets of the Markdown links (`[text](target)`) of `markdown`, outside code.
fn markdown_links(markdown: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for rest in line.split("](").skip(1) {
            if let Some((target, _)) = rest.split_once(')') {
                links.push(target.to_owned());
            }
        }
    }
    links
}

/// Every relative link of `README.md` under `root` that does not resolve: a missing file, or,
/// with `book` (the built book), an anchor into `docs/src/X.md` that is not an id of the page
/// mdBook built from it.
fn broken_readme_links(root: &Path, book: Option<&Path>) -> Vec<String> {
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let mut ids = Ids(std::collections::HashMap::new());
    let mut problems = Vec::new();
    for link in markdown_links(&readme) {
        if is_external(&link) {
            continue;
        }
        let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
        if path.is_empty() {
            problems.push(format!("README.md: `{link}` points into README.md itself"));
            continue;
        }
        let Some(target) = resolve(root, path, root).filter(|target| target.exists()) else {
            problems.push(format!("README.md: `{link}`: no such file"));
            continue;
        };
        if anchor.is_empty() {
            continue;
        }
        let Some(book) = book else { continue };
        let Some(page) = path
            .strip_prefix("docs/src/")
            .and_then(|page| page.strip_suffix(".md"))
        else {
            problems.push(format!(
                "README.md: `{link}`: an anchor outside the book is not checked: link the \
                 book's page instead"
            ));
            continue;
        };
        let html = book.join(format!("{page}.html"));
        if !ids.of(&html).contains(anchor) {
            problems.push(format!(
                "README.md: `{link}`: no id `{anchor}` in {} ({})",
                html.strip_prefix(book).unwrap().display(),
                target.display()
            ));
        }
    }
    problems
}

#[test]
fn every_code_and_every_driver_has_its_page_in_the_summary() {
    let problems = missing_pages(&root());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Not vacuous: the codes and drivers are there to be checked.
    let pages = expected_pages(&root());
    assert!(
        pages
            .iter()
            .any(|(page, _)| page == "reference/codes/B020.md")
    );
    assert!(
        pages
            .iter()
            .any(|(page, _)| page == "reference/drivers/redis.md")
    );
}

#[test]
fn a_code_file_without_a_page_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("crates/kernel/src/codes")).unwrap();
    fs::create_dir_all(root.join("crates/drivers/nats")).unwrap();
    fs::create_dir_all(root.join("docs/src/reference/codes")).unwrap();
    for code in ["B001", "B999", "B998"] {
        fs::write(root.join(format!("crates/kernel/src/codes/{code}.md")), "").unwrap();
    }
    fs::write(root.join("crates/drivers/nats/README.md"), "# nats\n").unwrap();
    fs::write(
        root.join("docs/src/reference/codes/B001.md"),
        "# SANDLOOM-B001\n\n{{#include ../../../../crates/kernel/src/codes/B001.md}}\n",
    )
    .unwrap();
    // B998 has a page, but it includes another code's file.
    fs::write(
        root.join("docs/src/reference/codes/B998.md"),
        "{{#include ../../../../crates/kernel/src/codes/B001.md}}\n",
    )
    .unwrap();
    fs::write(
        root.join("docs/src/SUMMARY.md"),
        "- [B001](reference/codes/B001.md)\n- [B998](reference/codes/B998.md)\n",
    )
    .unwrap();
    assert_eq!(
        missing_pages(root),
        [
            "docs/src/reference/codes/B998.md does not include crates/kernel/src/codes/B998.md \
             ({{#include ../../../../crates/kernel/src/codes/B998.md}})",
            "crates/kernel/src/codes/B999.md has no page: docs/src/reference/codes/B999.md is \
             missing",
            "crates/drivers/nats/README.md has no page: docs/src/reference/drivers/nats.md is \
             missing",
        ]
    );
}

#[test]
fn every_include_of_the_book_resolves() {
    let problems = broken_includes(&root().join("docs/src"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn an_include_of_a_missing_file_or_anchor_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::write(
        src.join("shared.md"),
        "intro\n<!-- ANCHOR: kept -->\ntext\n<!-- ANCHOR_END: kept -->\n\
         <!-- ANCHOR: hollow -->\n\n<!-- ANCHOR_END: hollow -->\n\
         <!-- ANCHOR: unclosed -->\ntext\n",
    )
    .unwrap();
    fs::write(
        src.join("page.md"),
        "{{#include shared.md}}\n{{#include shared.md:kept}}\n{{#include shared.md:gone}}\n\
         {{#include shared.md:hollow}}\n{{#include shared.md:unclosed}}\n{{#include nowhere.md}}\n",
    )
    .unwrap();
    assert_eq!(
        broken_includes(src),
        [
            "page.md: shared.md has no anchor `gone`",
            "page.md: the anchor `hollow` of shared.md is empty",
            "page.md: shared.md has no anchor `unclosed`",
            "page.md: includes nowhere.md, which does not exist",
        ]
    );
}

#[test]
fn every_link_of_the_readme_names_a_file_that_exists() {
    let problems = broken_readme_links(&root(), None);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let links = markdown_links(&fs::read_to_string(root().join("README.md")).unwrap());
    assert!(
        links
            .iter()
            .filter(|link| link.starts_with("docs/src/"))
            .count()
            >= 10,
        "README.md links into the book: {links:?}"
    );
}

#[test]
fn the_link_check_finds_broken_links_and_anchors() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path();
    fs::create_dir_all(book.join("guide")).unwrap();
    fs::write(book.join("index.html"), "<h1 id=\"top\">x</h1>").unwrap();
    fs::write(
        book.join("guide/a.html"),
        "<h2 id=\"here\">a</h2>\
         <a href=\"b.html#there\">ok</a> <a href=\"#here\">ok</a> <a href=\"../index.html#top\">ok</a>\
         <a href=\"..\">ok: a directory's index.html</a> <a href=\"https://example.com/x#y\">external</a>\
         <script src=\"../index.html?v=1\"></script>\
         <a href=\"b.html#nowhere\">bad anchor</a> <a href=\"c.html\">no file</a>\
         <a href=\"#gone\">bad in-page anchor</a> <a href=\"../../outside.html\">out</a>\
         <a href=\"NotifierConformance::delivered\">an intra-doc link</a> {{#include x.md}}",
    )
    .unwrap();
    fs::write(book.join("guide/b.html"), "<h2 id=\"there\">b</h2>").unwrap();
    assert_eq!(
        broken_links(book),
        [
            "guide/a.html: `#gone`: no id `gone` there",
            "guide/a.html: `../../outside.html` leaves the book",
            "guide/a.html: `NotifierConformance::delivered`: no such file",
            "guide/a.html: `b.html#nowhere`: no id `nowhere` there",
            "guide/a.html: `c.html`: no such file",
            "guide/a.html: an mdBook directive was left as text",
        ]
    );
}

#[test]
fn the_readme_check_finds_missing_files_and_anchors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("docs/src/guide")).unwrap();
    fs::create_dir_all(root.join("docs/book/guide")).unwrap();
    fs::write(root.join("docs/src/guide/a.md"), "# A\n## Here\n").unwrap();
    fs::write(root.join("docs/book/guide/a.html"), "<h2 id=\"here\">").unwrap();
    fs::write(root.join("KITS.md"), "").unwrap();
    fs::write(
        root.join("README.md"),
        "[ok](docs/src/guide/a.md#here) [ok](KITS.md) [web](https://example.com)\n\
         ```\n[in code](not/checked.md)\n```\n\
         [gone](docs/src/guide/b.md) [bad](docs/src/guide/a.md#there) [out](KITS.md#x)\n",
    )
    .unwrap();
    let book = root.join("docs/book");
    assert_eq!(
        broken_readme_links(root, Some(&book)),
        [
            "README.md: `docs/src/guide/b.md`: no such file",
            format!(
                "README.md: `docs/src/guide/a.md#there`: no id `there` in guide/a.html ({})",
                root.join("docs/src/guide/a.md").display()
            )
            .as_str(),
            "README.md: `KITS.md#x`: an anchor outside the book is not checked: link the book's \
             page instead",
        ]
    );
    // Without the built book, only the files are checked.
    assert_eq!(
        broken_readme_links(root, None),
        ["README.md: `docs/src/guide/b.md`: no such file"]
    );
}

#[test]
#[ignore = "needs the built book: scripts/book builds docs/book and runs this test"]
fn every_link_and_anchor_of_the_built_book_and_of_the_readme_resolves() {
    let book = root().join("docs/book");
    assert!(
        book.join("index.html").is_file(),
        "{} is not built: run scripts/book",
        book.display()
    );
    let mut problems = broken_links(&book);
    problems.extend(broken_readme_links(&root(), Some(&book)));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Not vacuous: the pages are there, with their links.
    let pages = files_in(&book, "html");
    assert!(pages.len() > 30, "{} pages", pages.len());
    let b020 = fs::read_to_string(book.join("reference/codes/B020.html")).unwrap();
    assert!(
        b020.contains("id=\"how-to-fix-it\""),
        "B020's page lacks its text"
    );
}
