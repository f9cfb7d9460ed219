//! An audit's records read back into what its tables show ([`shown`]): a
//! row per package, one file in detail, or a row per file, as the run
//! showed them, so that a saved run prints as the live one.

use std::collections::BTreeMap;

use atomlab_core::audit::{Class, PackageRow, RequireResult};
use atomlab_core::Record;
use serde::Deserialize;

/// One function's line in a saved binary record (what the tables show).
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionView {
    /// Entry address.
    pub addr: u64,
    /// Its name.
    pub name: String,
    /// Atomic read-modify-writes.
    pub atomics: u64,
    /// Counts by class name ([`Class::name`]).
    pub by_class: BTreeMap<String, u64>,
    /// LSE instructions with no CPU-feature test before them.
    pub lse_unconditional: u64,
    /// Evidence names (atomlab-audit's `Evidence::name`) for the others.
    pub lse_evidence: Vec<String>,
}

impl FunctionView {
    /// Its count of `class`.
    pub fn count(&self, class: Class) -> u64 {
        self.by_class.get(class.name()).copied().unwrap_or(0)
    }
}

/// The sentence of a verdict.
#[derive(Debug, Clone, Deserialize)]
pub struct VerdictWords {
    /// The sentence.
    pub words: String,
}

/// One binary as its record tells it (what the tables show).
#[derive(Debug, Clone, Deserialize)]
pub struct FileView {
    /// The file.
    pub path: String,
    /// Its architecture's name, from the record's parameters.
    #[serde(skip)]
    pub arch: String,
    /// Bytes of code scanned.
    pub code_bytes: u64,
    /// Whether it had a symbol table.
    pub has_symtab: bool,
    /// Its verdict.
    pub verdict: VerdictWords,
    /// Counts by class name outside helpers.
    pub by_class: BTreeMap<String, u64>,
    /// Counts by class name inside helpers.
    pub in_helpers: BTreeMap<String, u64>,
    /// Every site by mnemonic.
    pub by_mnemonic: BTreeMap<String, u64>,
    /// Calls to outline helpers by name.
    pub outline_calls: BTreeMap<String, u64>,
    /// Its top functions (as many as the run kept).
    pub functions: Vec<FunctionView>,
    /// Its notes.
    pub notes: Vec<String>,
    /// The `--require` judgement, if the run had one.
    #[serde(default)]
    pub require: Option<RequireResult>,
}

impl FileView {
    /// Its count of `class` outside helpers.
    pub fn count(&self, class: Class) -> u64 {
        self.by_class.get(class.name()).copied().unwrap_or(0)
    }

    /// Its count of `class` inside helpers.
    pub fn in_helpers(&self, class: Class) -> u64 {
        self.in_helpers.get(class.name()).copied().unwrap_or(0)
    }
}

/// What an audit's records show, as the run showed it.
#[derive(Debug, Clone)]
pub enum Shown {
    /// A row per package (those audited, in the order given) and how many
    /// packages the run was given.
    Packages {
        /// The audited packages.
        rows: Vec<PackageRow>,
        /// Packages given, audited or not.
        given: usize,
    },
    /// One file, in detail.
    One(Box<FileView>),
    /// A row per file.
    Files(Vec<FileView>),
    /// Nothing was audited.
    Nothing,
}

/// A record [`shown`] cannot read, and why.
#[derive(Debug, thiserror::Error)]
#[error("audit record {index} ({scenario}/{variant}) is not one atomlab audit writes: {reason}")]
pub struct NotAnAuditRecord {
    /// Its position among the records.
    pub index: usize,
    /// Its scenario.
    pub scenario: String,
    /// Its variant.
    pub variant: String,
    /// What is missing or wrong.
    pub reason: String,
}

/// Reads the records `atomlab audit` made (live, or saved and loaded) back into
/// what the run showed: a row per package, one file in detail, or a row
/// per file.
pub fn shown(records: &[Record]) -> Result<Shown, NotAnAuditRecord> {
    let bad = |index: usize, r: &Record, reason: String| NotAnAuditRecord {
        index,
        scenario: r.scenario.clone(),
        variant: r.variant.clone(),
        reason,
    };
    let mut rows = Vec::new();
    let mut files = Vec::new();
    let mut by_package = false;
    let mut given = 0;
    for (i, r) in records.iter().enumerate() {
        if r.variant == "package" {
            let (row, by, g) = PackageRow::read_back(r)
                .ok_or_else(|| bad(i, r, "no package verdict in its detail".into()))?;
            rows.push(row);
            by_package |= by;
            given = given.max(g);
        } else {
            let detail = r
                .detail
                .clone()
                .ok_or_else(|| bad(i, r, "it has no detail".into()))?;
            let mut f: FileView =
                serde_json::from_value(detail).map_err(|e| bad(i, r, e.to_string()))?;
            f.arch = r
                .parameters
                .get("arch")
                .and_then(|v| v.as_str())
                .unwrap_or("-")
                .to_string();
            files.push(f);
        }
    }
    Ok(if by_package {
        let given = given.max(rows.len());
        Shown::Packages { rows, given }
    } else if files.len() == 1 {
        Shown::One(Box::new(files.remove(0)))
    } else if files.is_empty() {
        Shown::Nothing
    } else {
        Shown::Files(files)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::audit::PackageVerdict;

    #[test]
    fn a_package_row_reads_back_from_its_record() {
        let row = PackageRow {
            name: "v81only".into(),
            version: Some("1.0-1".into()),
            architecture: Some("arm64".into()),
            path: "/d/v81only_1.0_arm64.deb".into(),
            verdict: Some(PackageVerdict::NeedsArmv81),
            files: 3,
            deciding_file: Some("/d/v81only_1.0_arm64.deb!/usr/bin/c-lse".into()),
            llsc_only_files: vec!["/d/v81only_1.0_arm64.deb!/usr/bin/b".into()],
            error: None,
        };
        let r = row.record(true, 5).expect("a verdict makes a record");
        assert_eq!(r.parameters["observation"], "needs_armv8.1");
        assert_eq!(r.notes[1], "decided by /usr/bin/c-lse");
        match shown(&[r]).unwrap() {
            Shown::Packages { rows, given } => {
                assert_eq!(rows, vec![row.clone()]);
                assert_eq!(given, 5);
            }
            other => panic!("a row per package, not {other:?}"),
        }
        // Shown by file: the package record alone is no view of its own.
        let r = row.record(false, 1).unwrap();
        assert!(matches!(shown(&[r]).unwrap(), Shown::Nothing));
        let unaudited = PackageRow {
            verdict: None,
            ..row
        };
        assert!(unaudited.record(true, 1).is_none());
    }

    #[test]
    fn a_record_of_something_else_is_refused_by_name() {
        let r = Record::new("audit", "binary", "mixed");
        let e = shown(&[r]).unwrap_err();
        assert_eq!(e.index, 0);
        assert!(e.to_string().contains("no detail"), "{e}");
    }
}
