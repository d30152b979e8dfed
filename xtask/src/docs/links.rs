//! The link rules: a relative link names an existing file, its `#anchor` a heading of that file
//! (GitHub's and mdBook's slugs agree on the headings these docs use), and every page under
//! `docs/` is reachable from `docs/SUMMARY.md`.

use std::{
    collections::BTreeSet,
    path::{Component, Path, PathBuf},
};

use anyhow::Context;
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

/// The broken relative links of `page`, as `page: link: why`.
pub fn broken(root: &Path, page: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(page).with_context(|| format!("reading {}", page.display()))?;
    let shown = page.strip_prefix(root).unwrap_or(page).display().to_string();
    let mut out = Vec::new();
    for link in targets(&text) {
        if link.contains("://") || link.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = match link.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (link.as_str(), None),
        };
        let target = if file.is_empty() {
            page.to_path_buf()
        } else {
            normalize(&page.parent().unwrap_or(root).join(file))
        };
        if !target.starts_with(root) {
            out.push(format!("{shown}: {link}: points outside the repository"));
        } else if !target.exists() {
            out.push(format!("{shown}: {link}: no such file"));
        } else if let Some(anchor) = anchor
            && target.extension().is_some_and(|e| e == "md")
        {
            let headings = slugs(&std::fs::read_to_string(&target)?);
            if !headings.contains(anchor) {
                out.push(format!("{shown}: {link}: no heading with anchor #{anchor}"));
            }
        }
    }
    Ok(out)
}

/// Pages under `docs/` that `docs/SUMMARY.md` does not link.
pub fn not_in_summary(root: &Path, pages: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    let docs = root.join("docs");
    let summary = docs.join("SUMMARY.md");
    let text = std::fs::read_to_string(&summary).with_context(|| format!("reading {}", summary.display()))?;
    let listed: BTreeSet<PathBuf> = targets(&text).iter().map(|t| normalize(&docs.join(t))).collect();
    Ok(pages
        .iter()
        .filter(|p| p.starts_with(&docs) && **p != summary && !listed.contains(*p))
        .map(|p| {
            format!(
                "{}: not in docs/SUMMARY.md",
                p.strip_prefix(root).unwrap_or(p).display()
            )
        })
        .collect())
}

/// Every link and image target of a Markdown text.
fn targets(text: &str) -> Vec<String> {
    Parser::new(text)
        .filter_map(|event| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some(dest_url.to_string())
            }
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings: lower case, spaces to `-`, punctuation dropped.
fn slugs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::Heading { level, .. }) if level <= HeadingLevel::H6 => {
                heading = Some(String::new())
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    out.insert(slug(&h));
                }
            }
            _ => {}
        }
    }
    out
}

fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_the_github_rule() {
        let s = slugs("# Known gaps\n\n## `kubectl ptah`\n\n### Step 1: install it\n");
        assert_eq!(
            s,
            BTreeSet::from([
                "known-gaps".to_owned(),
                "kubectl-ptah".to_owned(),
                "step-1-install-it".to_owned()
            ])
        );
    }

    #[test]
    fn broken_files_and_anchors_are_reported_and_good_links_are_not() {
        let dir = std::env::temp_dir().join(format!("xtask-links-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("docs")).expect("dir");
        std::fs::write(dir.join("docs/a.md"), "# Title\n\n## Part two\n").expect("a");
        std::fs::write(
            dir.join("docs/b.md"),
            "[ok](a.md) [ok](a.md#part-two) [web](https://x.invalid/y) [self](#b)\n\
             [gone](missing.md) [anchor](a.md#part-three) [out](../../etc/passwd)\n\n# B\n",
        )
        .expect("b");
        let found = broken(&dir, &dir.join("docs/b.md")).expect("check");
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].ends_with("missing.md: no such file"), "{found:?}");
        assert!(found[1].contains("#part-three"), "{found:?}");
        assert!(found[2].contains("outside the repository"), "{found:?}");
        std::fs::write(dir.join("docs/SUMMARY.md"), "- [A](a.md)\n").expect("summary");
        let pages = vec![dir.join("docs/a.md"), dir.join("docs/b.md")];
        assert_eq!(
            not_in_summary(&dir, &pages).expect("summary"),
            vec!["docs/b.md: not in docs/SUMMARY.md".to_owned()]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
