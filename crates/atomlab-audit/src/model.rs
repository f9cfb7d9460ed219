//! What an audit finds: atomic sites by class, LL/SC loops, outline helpers,
//! per-function tallies and the verdict. These are the serde types the CLI
//! prints as tables or JSON.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// Instruction-set architecture of an audited ELF file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// AArch64 (Arm A64).
    Aarch64,
    /// x86-64.
    X86_64,
    /// 64-bit RISC-V.
    Riscv64,
}

impl Arch {
    /// The name people and Debian use (`aarch64`, `x86-64`, `riscv64`).
    pub fn name(self) -> &'static str {
        match self {
            Arch::Aarch64 => "aarch64",
            Arch::X86_64 => "x86-64",
            Arch::Riscv64 => "riscv64",
        }
    }

    /// Rust's name for it (`std::env::consts::ARCH`: `aarch64`, `x86_64`,
    /// `riscv64`), as its JSON writes it.
    pub fn cpu(self) -> &'static str {
        match self {
            Arch::Aarch64 => "aarch64",
            Arch::X86_64 => "x86_64",
            Arch::Riscv64 => "riscv64",
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub use atomlab_core::audit::Class;

/// Memory ordering carried by an instruction's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// No ordering bits (relaxed), or not applicable (barriers).
    Relaxed,
    /// Acquire (A suffix, `.aq`).
    Acquire,
    /// Release (L suffix, `.rl`).
    Release,
    /// Both (AL suffix, `.aqrl`).
    AcqRel,
    /// x86 locked instructions: sequentially consistent full barrier.
    SeqCst,
}

impl Order {
    /// From an (acquire, release) pair of encoding bits.
    pub fn from_bits(acquire: bool, release: bool) -> Order {
        match (acquire, release) {
            (false, false) => Order::Relaxed,
            (true, false) => Order::Acquire,
            (false, true) => Order::Release,
            (true, true) => Order::AcqRel,
        }
    }
}

/// One atomic or ordering instruction found in the code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Site {
    /// Virtual address.
    pub addr: u64,
    /// Its class.
    pub class: Class,
    /// The mnemonic as GNU objdump prints it (`ldaddal`, `stlxrb`, `dmb ish`,
    /// `lock xadd`, `amoadd.w.aqrl`, `fence rw,rw`).
    pub mnemonic: String,
    /// Ordering from the encoding.
    pub order: Order,
    /// Bytes accessed (0 for barriers and calls).
    pub size: u8,
}

/// An outline-atomics helper (`__aarch64_ldadd4_acq_rel` and kin).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Helper {
    /// Entry address.
    pub addr: u64,
    /// One past its last instruction.
    pub end: u64,
    /// Its libgcc name, from the symbol or rebuilt from its shape.
    pub name: String,
    /// How it was found: `symbol` or `shape` (stripped binaries).
    pub found_by: &'static str,
}

/// Why an aarch64 LSE instruction is taken to be chosen at run time, so
/// that an ARMv8.0 CPU never executes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// `getauxval(AT_HWCAP)`'s result tested by a branch, LSE on one arm and
    /// an LL/SC loop on the other.
    Getauxval,
    /// A flag loaded from memory (Go's `internal/cpu.ARM64.HasATOMICS`, a
    /// cached HWCAP bit, libgcc's `__aarch64_have_lse_atomics`) tested by
    /// CBZ/CBNZ/TBZ/TBNZ, or by CMP/TST and B.cond, LSE on one arm and an
    /// LL/SC loop on the other.
    FlagTest,
    /// An ID register read (MRS) tested by a branch, likewise.
    IdRegister,
    /// In one of several implementations a GNU ifunc resolver chooses
    /// between at load time.
    Ifunc,
    /// In a function that nothing in the (position-independent) file calls,
    /// branches to or points to: never run (Debian 12's libatomic carries
    /// LSE variants its ifunc resolvers never return).
    Unreferenced,
}

impl Evidence {
    /// The kebab-case name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Evidence::Getauxval => "getauxval",
            Evidence::FlagTest => "flag-test",
            Evidence::IdRegister => "id-register",
            Evidence::Ifunc => "ifunc",
            Evidence::Unreferenced => "unreferenced",
        }
    }

    /// What it means, for the verdict sentence.
    pub fn words(self) -> &'static str {
        match self {
            Evidence::Getauxval => "behind a getauxval(AT_HWCAP) test with an LL/SC fallback",
            Evidence::FlagTest => "behind a CPU-feature flag test with an LL/SC fallback",
            Evidence::IdRegister => "behind an ID-register test with an LL/SC fallback",
            Evidence::Ifunc => "in implementations an ifunc resolver chooses between",
            Evidence::Unreferenced => "in functions nothing in the file reaches",
        }
    }
}

/// How the aarch64 LSE instructions outside outline helpers are reached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LseDispatch {
    /// LSE instructions reached only behind a CPU-feature test (or never):
    /// ARMv8.0-safe.
    pub chosen_at_run_time: u64,
    /// LSE instructions on a path with no such test: SIGILL on ARMv8.0.
    pub unconditional: u64,
    /// LL/SC loops that are the ARMv8.0 side of such a test (or never run).
    pub llsc_fallback_loops: u64,
    /// Load-exclusives in those fallbacks.
    pub fallback_exclusives: u64,
    /// LSE instructions chosen at run time, by the evidence for it.
    pub evidence: BTreeMap<Evidence, u64>,
}

impl LseDispatch {
    /// The evidence as `flag-test 12, ifunc 3`.
    pub fn evidence_list(&self) -> String {
        self.evidence
            .iter()
            .map(|(e, n)| format!("{} {n}", e.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Tallies for one function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionTally {
    /// Entry address.
    pub addr: u64,
    /// Symbol name, or `fn@0x…` where the binary is stripped.
    pub name: String,
    /// How its start was found: `symbol`, `eh_frame`, `gopclntab`,
    /// `helper-shape`, `entry`.
    pub found_by: &'static str,
    /// Atomic read-modify-writes (LSE, LL/SC loops, outline calls, locked, AMO).
    pub atomics: u64,
    /// Counts by class.
    pub by_class: BTreeMap<Class, u64>,
    /// LSE instructions here with no CPU-feature test before them.
    pub lse_unconditional: u64,
    /// Evidence that the other LSE instructions here are chosen at run time.
    pub lse_evidence: Vec<Evidence>,
    /// LL/SC loops here that are the ARMv8.0 side of such a choice.
    pub llsc_fallbacks: u64,
}

/// The plain-words verdict for one binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BinaryVerdictKind {
    /// No atomic read-modify-writes at all.
    NoAtomics,
    /// aarch64: only calls to outline helpers (LSE picked at run time).
    OutlineAtomics,
    /// aarch64: LSE inline, needs ARMv8.1.
    InlineLse,
    /// aarch64: LSE inline but only behind CPU-feature tests (ARMv8.0-safe).
    RuntimeLse,
    /// aarch64: LL/SC loops only.
    LlscOnly,
    /// aarch64: more than one of the above.
    Mixed,
    /// x86-64: locked instructions.
    X86Locked,
    /// riscv64: AMOs only.
    RiscvAmo,
    /// riscv64: LR/SC only.
    RiscvLrsc,
    /// riscv64: both AMOs and LR/SC.
    RiscvAmoAndLrsc,
    /// Any architecture: atomics only through calls to libatomic.
    LibatomicOnly,
}

/// What a binary needs of the CPU (its kind) and the sentence people read;
/// a package's is a [`crate::PackageVerdict`], a record's an `atomlab_core::Verdict`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BinaryVerdict {
    /// Machine-readable kind.
    pub kind: BinaryVerdictKind,
    /// The sentence.
    pub words: String,
}

/// Everything the audit found in one ELF file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BinaryAudit {
    /// The file (for a `.deb` member: `pkg.deb!/usr/lib/…`).
    pub path: String,
    /// Architecture.
    pub arch: Arch,
    /// Bytes of executable code scanned.
    pub code_bytes: u64,
    /// Whether the file had a symbol table (`.symtab`).
    pub has_symtab: bool,
    /// Verdict.
    pub verdict: BinaryVerdict,
    /// Counts by class outside outline helpers (what the program itself does).
    pub by_class: BTreeMap<Class, u64>,
    /// Counts by class inside outline helpers (their LSE and LL/SC halves).
    pub in_helpers: BTreeMap<Class, u64>,
    /// Counts by class of sites outside every known function extent
    /// (`.eh_frame` FDEs, sized symbols): data in `.text` decoded as code.
    pub outside_functions: BTreeMap<Class, u64>,
    /// Every site by mnemonic, helpers included (what `objdump -d` shows).
    pub by_mnemonic: BTreeMap<String, u64>,
    /// Outline helpers present.
    pub helpers: Vec<Helper>,
    /// Calls to outline helpers by helper name.
    pub outline_calls: BTreeMap<String, u64>,
    /// Calls to libatomic by function name.
    pub libatomic_calls: BTreeMap<String, u64>,
    /// LL/SC loops outside helpers by their load/store-exclusive pair
    /// (`ldaxr/stlxr`).
    pub llsc_loops: BTreeMap<String, u64>,
    /// aarch64: which LSE instructions are chosen at run time, and why.
    pub lse_dispatch: LseDispatch,
    /// Functions with atomics, most atomics first.
    pub functions: Vec<FunctionTally>,
    /// Functions known (symbols, `.eh_frame`, helper shapes).
    pub functions_known: u64,
    /// Things the reader must know (undecodable bytes, missing symbols).
    pub notes: Vec<String>,
}

impl BinaryAudit {
    /// Count of `class` outside helpers.
    pub fn count(&self, class: Class) -> u64 {
        self.by_class.get(&class).copied().unwrap_or(0)
    }
}

/// A `--require` gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Requirement {
    /// Inline LSE throughout: no outline calls, no LL/SC loops outside helpers.
    Lse,
    /// Outline atomics: no inline LSE (SIGILL on ARMv8.0), no inline LL/SC.
    Outline,
    /// No LL/SC loops outside outline helpers.
    NoLlsc,
}

impl Requirement {
    /// Whether `audit` complies; `Err` says why not. Non-aarch64 binaries
    /// comply: the gate is about Arm's two ways of doing atomics.
    pub fn check(self, audit: &BinaryAudit) -> Result<(), String> {
        if audit.arch != Arch::Aarch64 {
            return Ok(());
        }
        // LSE behind a CPU-feature test and its LL/SC fallback are run-time
        // dispatch, like the outline helpers' two halves.
        let d = &audit.lse_dispatch;
        let lse = d.unconditional;
        let loops = audit
            .count(Class::LlscLoop)
            .saturating_sub(d.llsc_fallback_loops);
        let excl = audit
            .count(Class::LoadExclusive)
            .saturating_sub(d.fallback_exclusives);
        let calls = audit.count(Class::OutlineCall) + audit.count(Class::LibatomicCall);
        let llsc = |n: u64, e: u64| {
            if n > 0 {
                Err(format!("{n} inline LL/SC loops"))
            } else if e > 0 {
                Err(format!("{e} inline load-exclusives"))
            } else {
                Ok(())
            }
        };
        match self {
            Requirement::Lse => {
                llsc(loops, excl)?;
                // LSE behind a run-time test keeps an LL/SC path, like the
                // outline helpers: not "LSE throughout".
                if d.llsc_fallback_loops > 0 {
                    return Err(format!(
                        "{} LL/SC fallback loops (LSE chosen at run time)",
                        d.llsc_fallback_loops
                    ));
                }
                if calls > 0 {
                    return Err(format!("{calls} calls to outline helpers or libatomic"));
                }
                Ok(())
            }
            Requirement::Outline => {
                llsc(loops, excl)?;
                if lse > 0 {
                    return Err(format!("{lse} inline LSE instructions (SIGILL on ARMv8.0)"));
                }
                Ok(())
            }
            Requirement::NoLlsc => llsc(loops, excl),
        }
    }

    /// The flag's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Requirement::Lse => "lse",
            Requirement::Outline => "outline",
            Requirement::NoLlsc => "no-llsc",
        }
    }
}
