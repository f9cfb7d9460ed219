//! One answer per Debian package: its files' verdicts folded into the worst
//! of them (issue 27). A distribution maintainer asks of each package "does
//! it run on ARMv8.0, and is it slow there?", not of each of its 16 ELF
//! files; the order of severity is the one those two questions give:
//! unconditional LSE (SIGILL on ARMv8.0) first, then LL/SC loops only (slow
//! under contention on ARMv8.1+, fixed by `-moutline-atomics`), then a mix,
//! then LSE chosen at run time (outline helpers, a CPU-feature test), then
//! no atomics.
//!
//! The package's name is the `Package:` field of its control file
//! (deb-control(5)), whatever the file is called, so that two snapshots of
//! an archive match by name across versions and renamed files; its
//! `Version:` and `Architecture:` go with it. Only a package whose control
//! member cannot be read is named by its file name up to the first `_`
//! (Debian's `NAME_VERSION_ARCH.deb`, as dpkg-name(1) names packages).

use std::path::{Path, PathBuf};

use crate::error::AuditError;
use crate::input::{self, Expanded};
use crate::model::{Arch, BinaryAudit, BinaryVerdictKind};

pub use atomlab_core::audit::PackageVerdict;

/// The verdict one aarch64 file gives its package; `None` for other
/// architectures (the per-package answer is about Arm's atomics).
pub(crate) fn verdict_of(a: &BinaryAudit) -> Option<PackageVerdict> {
    if a.arch != Arch::Aarch64 {
        return None;
    }
    if a.lse_dispatch.unconditional > 0 {
        return Some(PackageVerdict::NeedsArmv81);
    }
    Some(match a.verdict.kind {
        BinaryVerdictKind::NoAtomics => PackageVerdict::NoAtomics,
        BinaryVerdictKind::InlineLse => PackageVerdict::NeedsArmv81,
        BinaryVerdictKind::LlscOnly => PackageVerdict::LlscOnly,
        BinaryVerdictKind::Mixed => PackageVerdict::Mixed,
        _ => PackageVerdict::RunTimeLse,
    })
}

/// One package (or one ELF file given outside a package) audited.
#[derive(Debug)]
pub struct PackageAudit {
    /// The `.deb` (or ELF file) as given or found.
    pub path: String,
    /// The package's name: its control file's `Package:` (else its file
    /// name up to the first `_`); an ELF file outside a package is named
    /// by its path.
    pub name: String,
    /// Its control file's `Version:`.
    pub version: Option<String>,
    /// Its control file's `Architecture:` (what it says it is for; its ELF
    /// files decide the verdict).
    pub architecture: Option<String>,
    /// Whether it is a package (a file starting with the `ar` magic).
    pub is_package: bool,
    /// Its worst file's verdict; `None` when no aarch64 file was audited.
    pub verdict: Option<PackageVerdict>,
    /// The first file with that verdict.
    pub deciding_file: Option<String>,
    /// Its ELF files audited, in archive order.
    pub audits: Vec<BinaryAudit>,
    /// What could not be read (the package, or some of its files).
    pub errors: Vec<AuditError>,
    /// Non-ELF files passed over.
    pub skipped_non_elf: u64,
}

impl PackageAudit {
    /// Files audited for aarch64 (those the verdict is made of).
    pub fn aarch64_files(&self) -> usize {
        self.audits
            .iter()
            .filter(|a| a.arch == Arch::Aarch64)
            .count()
    }

    /// The files whose own verdict is LL/SC only: the hot paths a rebuild
    /// with `-moutline-atomics` turns into LSE on ARMv8.1+.
    pub fn llsc_only_files(&self) -> impl Iterator<Item = &BinaryAudit> {
        self.audits
            .iter()
            .filter(|a| verdict_of(a) == Some(PackageVerdict::LlscOnly))
    }

    /// Why there is no verdict, in one line: the package could not be read,
    /// or is for another architecture. `None` when there is a verdict.
    pub fn why_no_verdict(&self) -> Option<String> {
        if self.verdict.is_some() {
            return None;
        }
        let mut arches: Vec<String> = self.audits.iter().map(|a| a.arch.to_string()).collect();
        for e in &self.errors {
            if let AuditError::UnknownArch { found, .. } = e {
                arches.push(found.clone());
            }
        }
        arches.sort();
        arches.dedup();
        let foreign = self.audits.len()
            + self
                .errors
                .iter()
                .filter(|e| matches!(e, AuditError::UnknownArch { .. }))
                .count();
        if foreign > 0 && foreign == self.audits.len() + self.errors.len() {
            if !self.is_package {
                return Some(format!(
                    "{}: not an aarch64 file ({}); the per-package verdict is about aarch64 (--by-file audits x86-64 and riscv64 files)",
                    self.path,
                    arches.join(", ")
                ));
            }
            let says = self
                .architecture
                .as_ref()
                .map(|a| format!(" (its control file says Architecture: {a})"))
                .unwrap_or_default();
            return Some(format!(
                "{}: not an arm64 package: its {foreign} ELF file(s) are for {}{says}; the per-package verdict is about aarch64 (--by-file audits x86-64 and riscv64 files)",
                self.path,
                arches.join(", ")
            ));
        }
        match self.errors.as_slice() {
            [] => Some(format!("{}: no ELF file audited", self.path)),
            [one] => Some(one.to_string()),
            [first, rest @ ..] => Some(format!(
                "{first} (and {} more error(s) in this package)",
                rest.len()
            )),
        }
    }

    /// When some files could not be audited beside a verdict: one line.
    pub fn partial_errors(&self) -> Option<String> {
        if self.verdict.is_none() || self.errors.is_empty() {
            return None;
        }
        Some(format!(
            "{}: {} file(s) not audited, left out of its verdict; first: {}",
            self.path,
            self.errors.len(),
            self.errors[0]
        ))
    }
}

/// The package name of `path` when its control file cannot be read: its
/// file name up to the first `_`.
pub(crate) fn package_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_else(|| path.display().to_string());
    let name = match file.split_once('_') {
        Some((name, _)) if !name.is_empty() => name,
        _ => file.trim_end_matches(".deb"),
    };
    atomlab_core::text::shown(name, input::MAX_NAME_CHARS)
}

/// Audits one unit (a `.deb`, or an ELF file) on the calling thread.
pub(crate) fn audit_unit(path: &Path) -> PackageAudit {
    let mut expanded = Expanded::default();
    let is_package = input::looks_like_package(path);
    let mut audits = Vec::new();
    let mut audit_errors = Vec::new();
    // Each ELF file audited as it is read, its bytes dropped before the
    // next is read (issue 33: a package's files were all held at once).
    input::expand_each(
        path,
        &mut expanded,
        &mut |path, data| match crate::audit_bytes(path, data) {
            Ok(a) => audits.push(a),
            Err(e) => audit_errors.push(e),
        },
    );
    let mut errors = std::mem::take(&mut expanded.errors);
    errors.append(&mut audit_errors);
    let mut verdict = None;
    let mut deciding_file = None;
    for a in &audits {
        if let Some(v) = verdict_of(a) {
            if verdict.is_none_or(|w| v > w) {
                verdict = Some(v);
                deciding_file = Some(a.path.clone());
            }
        }
    }
    let control = expanded.controls.into_iter().next().map(|(_, c)| c);
    let name = match (&control, is_package) {
        (Some(c), _) => c.package.clone(),
        (None, true) => package_name(path),
        (None, false) => input::path_shown(path),
    };
    let (version, architecture) = control.map_or((None, None), |c| (c.version, c.architecture));
    PackageAudit {
        path: input::path_shown(path),
        name,
        version,
        architecture,
        is_package,
        verdict,
        deciding_file,
        audits,
        errors,
        skipped_non_elf: expanded.skipped_non_elf,
    }
}

/// The units under `paths`: each `.deb` and each ELF file (directories
/// walked in name order, as [`input::list_units`] does), with the
/// listing's errors, the count of other files passed over and the
/// symbolic links passed over.
pub(crate) fn units(paths: &[PathBuf]) -> (Vec<PathBuf>, Expanded) {
    let mut units = Vec::new();
    let mut out = Expanded::default();
    for p in paths {
        input::list_units(p, &mut units, &mut out);
    }
    (units, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_first_is_the_order_of_severity() {
        let mut all = PackageVerdict::WORST_FIRST;
        all.sort();
        all.reverse();
        assert_eq!(all, PackageVerdict::WORST_FIRST);
        assert_eq!(
            PackageVerdict::WORST_FIRST.iter().max(),
            Some(&PackageVerdict::NeedsArmv81)
        );
    }

    #[test]
    fn the_package_name_is_the_file_name_up_to_the_first_underscore() {
        assert_eq!(
            package_name(Path::new("/a/libstdc++6_12.2.0-14+deb12u1_arm64.deb")),
            "libstdc++6"
        );
        assert_eq!(package_name(Path::new("local.deb")), "local");
        assert_eq!(package_name(Path::new("_odd.deb")), "_odd");
    }
}
