//! What an audit's records say, in the terms both sides use: the classes
//! of atomic and ordering instructions ([`Class`]), a package's verdict
//! ([`PackageVerdict`]), a `--require` judgement ([`RequireResult`]) and
//! the per-package row ([`PackageRow`]), which atomlab-audit writes and
//! whatever prints a saved run (atomlab-report) reads back, without
//! needing the auditor itself.

use serde::{Deserialize, Serialize};

use crate::{Metric, Record, Source, Unit};

/// What kind of atomic or ordering instruction a site is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// AArch64 LSE (ARMv8.1) atomic: CAS, CASP, SWP, `LD<op>`, `ST<op>`.
    Lse,
    /// Load-exclusive / load-reserved (LDXR, LDAXR, LDXP…, RISC-V LR).
    LoadExclusive,
    /// Store-exclusive / store-conditional (STXR, STLXR, STXP…, RISC-V SC).
    StoreExclusive,
    /// A load-exclusive … store-exclusive retry loop.
    LlscLoop,
    /// A call (BL, or a tail call B) to an outline-atomics helper.
    OutlineCall,
    /// An outline-atomics helper function present in the binary.
    OutlineHelper,
    /// A memory barrier: DMB, DSB, ISB; MFENCE, LFENCE, SFENCE; FENCE, FENCE.TSO.
    Barrier,
    /// A load-acquire (LDAR, LDARB, LDARH, LDLAR…).
    AcquireLoad,
    /// A store-release (STLR, STLUR, STLLR…).
    ReleaseStore,
    /// A load-acquire RCpc (LDAPR, LDAPUR…).
    RcpcLoad,
    /// x86-64 lock-prefixed read-modify-write.
    LockedRmw,
    /// x86-64 XCHG with a memory operand (implicitly locked).
    XchgMem,
    /// x86-64 CMPXCHG8B / CMPXCHG16B (locked or not).
    WideCas,
    /// RISC-V AMO (A extension).
    Amo,
    /// A call to libatomic (`__atomic_fetch_add_4`…), which picks its
    /// implementation at run time.
    LibatomicCall,
}

impl Class {
    /// Every class, in table order.
    pub const ALL: [Class; 15] = [
        Class::Lse,
        Class::LoadExclusive,
        Class::StoreExclusive,
        Class::LlscLoop,
        Class::OutlineCall,
        Class::OutlineHelper,
        Class::Barrier,
        Class::AcquireLoad,
        Class::ReleaseStore,
        Class::RcpcLoad,
        Class::LockedRmw,
        Class::XchgMem,
        Class::WideCas,
        Class::Amo,
        Class::LibatomicCall,
    ];

    /// The snake_case name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Class::Lse => "lse",
            Class::LoadExclusive => "load_exclusive",
            Class::StoreExclusive => "store_exclusive",
            Class::LlscLoop => "llsc_loop",
            Class::OutlineCall => "outline_call",
            Class::OutlineHelper => "outline_helper",
            Class::Barrier => "barrier",
            Class::AcquireLoad => "acquire_load",
            Class::ReleaseStore => "release_store",
            Class::RcpcLoad => "rcpc_load",
            Class::LockedRmw => "locked_rmw",
            Class::XchgMem => "xchg_mem",
            Class::WideCas => "wide_cas",
            Class::Amo => "amo",
            Class::LibatomicCall => "libatomic_call",
        }
    }

    /// Whether the class is an atomic read-modify-write (what `--by-function`
    /// ranks on and what decides "no atomics").
    pub fn is_rmw(self) -> bool {
        matches!(
            self,
            Class::Lse
                | Class::LlscLoop
                | Class::OutlineCall
                | Class::LockedRmw
                | Class::XchgMem
                | Class::WideCas
                | Class::Amo
                | Class::LibatomicCall
        )
    }
}

/// A package's verdict, least severe first (so `max` is the worst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PackageVerdict {
    /// No atomic read-modify-write in any file.
    NoAtomics,
    /// Atomics through outline helpers or LSE behind a CPU-feature test:
    /// ARMv8.0-safe and LSE where the CPU has it.
    RunTimeLse,
    /// A file mixes ways (none of them unconditional LSE).
    Mixed,
    /// A file does its atomics with LL/SC loops only.
    LlscOnly,
    /// A file has LSE behind no CPU-feature test: SIGILL on ARMv8.0.
    NeedsArmv81,
}

impl PackageVerdict {
    /// Every verdict, worst first.
    pub const WORST_FIRST: [PackageVerdict; 5] = [
        PackageVerdict::NeedsArmv81,
        PackageVerdict::LlscOnly,
        PackageVerdict::Mixed,
        PackageVerdict::RunTimeLse,
        PackageVerdict::NoAtomics,
    ];

    /// Its name in records and JSON.
    pub fn name(self) -> &'static str {
        match self {
            PackageVerdict::NoAtomics => "no_atomics",
            PackageVerdict::RunTimeLse => "run_time_lse",
            PackageVerdict::Mixed => "mixed",
            PackageVerdict::LlscOnly => "llsc_only",
            PackageVerdict::NeedsArmv81 => "needs_armv8.1",
        }
    }

    /// Its sentence.
    pub fn words(self) -> &'static str {
        match self {
            PackageVerdict::NoAtomics => "no atomics",
            PackageVerdict::RunTimeLse => "outline or run-time LSE (ARMv8.0-safe)",
            PackageVerdict::Mixed => "mixed LSE, LL/SC and outline (ARMv8.0-safe)",
            PackageVerdict::LlscOnly => "LL/SC only (no LSE on ARMv8.1+)",
            PackageVerdict::NeedsArmv81 => "needs ARMv8.1 (SIGILL on ARMv8.0)",
        }
    }
}

/// A `--require` judgement of one binary. `met` is `None` where the
/// requirement does not apply (it is about aarch64's atomics; an x86-64 or
/// riscv64 binary neither meets nor breaks it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequireResult {
    /// The requirement's name (`lse`, `outline`, `no-llsc`).
    pub requirement: String,
    /// Whether the binary meets it.
    pub met: Option<bool>,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl RequireResult {
    /// The judgement in words (`met`, `NOT met: …`).
    pub fn words(&self) -> String {
        match (self.met, &self.reason) {
            (None, _) => "not applicable (aarch64 only)".into(),
            (Some(true), _) => "met".into(),
            (Some(false), Some(r)) => format!("NOT met: {r}"),
            (Some(false), None) => "NOT met".into(),
        }
    }
}

/// What the per-package view and record need of a package's audit (its
/// files' audits move on to the per-file records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageRow {
    /// The package's name (its control file's `Package:`).
    pub name: String,
    /// Its control file's `Version:`.
    pub version: Option<String>,
    /// Its control file's `Architecture:`.
    pub architecture: Option<String>,
    /// The `.deb` (or ELF file) as given.
    pub path: String,
    /// Its worst file's verdict.
    pub verdict: Option<PackageVerdict>,
    /// ELF files audited.
    pub files: usize,
    /// The file that decided the verdict.
    pub deciding_file: Option<String>,
    /// Its files that do their atomics with LL/SC only.
    pub llsc_only_files: Vec<String>,
    /// Why it has no verdict (one line), or which of its files were left out.
    pub error: Option<String>,
}

impl PackageRow {
    /// Whether `path` is this package or one of its files.
    pub fn owns(&self, path: &str) -> bool {
        path.strip_prefix(self.path.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('!'))
    }

    /// A file of this package by its path inside it.
    pub fn member<'a>(&self, file: &'a str) -> &'a str {
        file.strip_prefix(self.path.as_str())
            .and_then(|f| f.strip_prefix('!'))
            .unwrap_or(file)
    }

    /// The package as a record: scenario = its name, its verdict the
    /// observation (what `compare` matches across two snapshots of an
    /// archive), its file count a metric, the deciding file its detail;
    /// the detail also says whether the run showed a row per package and
    /// how many packages it was given (what a printer of the run needs).
    pub fn record(&self, by_package: bool, given: usize) -> Option<Record> {
        let v = self.verdict?;
        let mut r = Record::new("audit", &self.name, "package");
        r.param("path", self.path.clone())
            .param("observation", v.name());
        // Counted, not sampled: one "run".
        r.metrics.push(Metric::new(
            "elf_files",
            Unit::Count,
            Source::Derived,
            vec![self.files as f64],
        ));
        r.notes.push(v.words().to_string());
        if let Some(f) = &self.deciding_file {
            r.notes.push(format!("decided by {}", self.member(f)));
        }
        r.detail = Some(serde_json::json!({
            "path": self.path,
            "package": self.name,
            "version": self.version,
            "architecture": self.architecture,
            "verdict": { "kind": v.name(), "words": v.words() },
            "elf_files": self.files,
            "deciding_file": self.deciding_file,
            "llsc_only_files": self.llsc_only_files,
            "by_package": by_package,
            "packages_given": given,
        }));
        Some(r)
    }

    /// A package record read back (the HTML report's archive section
    /// reads them so); `None` if it is not one atomlab-audit wrote.
    pub fn from_record(r: &Record) -> Option<PackageRow> {
        Self::read_back(r).map(|(row, ..)| row)
    }

    /// [`PackageRow::from_record`], with whether the run showed a row per
    /// package and how many packages it was given.
    pub fn read_back(r: &Record) -> Option<(PackageRow, bool, usize)> {
        if r.variant != "package" {
            return None;
        }
        let d = r.detail.as_ref()?;
        let kind = d["verdict"]["kind"].as_str()?;
        let verdict = PackageVerdict::WORST_FIRST
            .into_iter()
            .find(|v| v.name() == kind)?;
        let text = |k: &str| d[k].as_str().map(str::to_string);
        let row = PackageRow {
            name: r.scenario.clone(),
            // Saved before these were written: none.
            version: text("version"),
            architecture: text("architecture"),
            path: d["path"].as_str()?.to_string(),
            verdict: Some(verdict),
            files: usize::try_from(d["elf_files"].as_u64()?).ok()?,
            deciding_file: d["deciding_file"].as_str().map(str::to_string),
            llsc_only_files: serde_json::from_value(d["llsc_only_files"].clone()).ok()?,
            error: None,
        };
        // Saved before these were written: a row per package, all audited.
        let by_package = d["by_package"].as_bool().unwrap_or(true);
        let given = d["packages_given"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok());
        Some((row, by_package, given.unwrap_or(0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `compare` ranks package observations by atomlab-core's list; the
    /// words the audit writes must be that list, in its order.
    #[test]
    fn package_verdicts_are_the_words_compare_ranks() {
        let written: Vec<&str> = PackageVerdict::WORST_FIRST
            .iter()
            .map(|v| v.name())
            .collect();
        assert_eq!(written, crate::AUDIT_PACKAGE_WORST_FIRST);
    }
}
