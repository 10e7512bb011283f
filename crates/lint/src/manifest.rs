//! Line and column of an entry in a member's `Cargo.toml`, found with a span-keeping TOML
//! parse (no network, no cargo: the file as written).

use std::path::Path;

use toml::de::{DeTable, DeValue};

use crate::workspace::Dep;

/// A member's manifest text, for locating entries.
pub(crate) struct Manifest {
    text: String,
}

impl Manifest {
    /// Read the manifest; an unreadable one yields no positions, not an error (cargo has read
    /// it already, so this does not happen in practice).
    pub(crate) fn read(path: &Path) -> Manifest {
        Manifest {
            text: std::fs::read_to_string(path).unwrap_or_default(),
        }
    }

    /// 1-based (line, column) of a dependency's key.
    pub(crate) fn dependency(&self, dep: &Dep) -> Option<(usize, usize)> {
        let root = DeTable::parse(&self.text).ok()?;
        let root = root.get_ref();
        let mut table = root;
        if let Some(target) = &dep.target {
            let targets = table_of(table, "target")?;
            let wanted: String = target.chars().filter(|c| !c.is_whitespace()).collect();
            table = targets.iter().find_map(|(key, value)| {
                let key: String = key
                    .get_ref()
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect();
                match value.get_ref() {
                    DeValue::Table(t) if key == wanted => Some(t),
                    _ => None,
                }
            })?;
        }
        let deps = dep
            .table_names()
            .iter()
            .find_map(|name| table_of(table, name))?;
        let (key, _) = deps.get_key_value(dep.key.as_str())?;
        Some(self.position(key.span().start))
    }

    /// 1-based (line, column) of a key under `[package.metadata.sandloom]`, or of the table.
    pub(crate) fn sandloom_key(&self, key: &str) -> Option<(usize, usize)> {
        let root = DeTable::parse(&self.text).ok()?;
        let sandloom = [("package"), ("metadata")]
            .iter()
            .try_fold(root.get_ref(), |t, name| table_of(t, name))?;
        let (found, value) = sandloom.get_key_value("sandloom")?;
        if let DeValue::Table(table) = value.get_ref()
            && let Some((k, _)) = table.get_key_value(key)
        {
            return Some(self.position(k.span().start));
        }
        Some(self.position(found.span().start))
    }

    /// 1-based (line, column) of element `index` of the array at `path` (an array of tables
    /// like `[[workspace.metadata.sandloom.allow]]`).
    pub(crate) fn array_item(&self, path: &[&str], index: usize) -> Option<(usize, usize)> {
        let root = DeTable::parse(&self.text).ok()?;
        let (last, tables) = path.split_last()?;
        let table = tables
            .iter()
            .try_fold(root.get_ref(), |t, name| table_of(t, name))?;
        match table.get(*last)?.get_ref() {
            DeValue::Array(items) => Some(self.position(items.get(index)?.span().start)),
            _ => None,
        }
    }

    fn position(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before
            .rfind('\n')
            .map_or(before, |i| &before[i + 1..])
            .chars()
            .count()
            + 1;
        (line, column)
    }
}

fn table_of<'a, 'i>(table: &'a DeTable<'i>, name: &str) -> Option<&'a DeTable<'i>> {
    match table.get(name)?.get_ref() {
        DeValue::Table(t) => Some(t),
        _ => None,
    }
}
