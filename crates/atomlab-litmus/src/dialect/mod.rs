//! herd's litmus dialects, one file each: C (with the Linux kernel's
//! primitives), AArch64, X86, X86_64 and RISCV, each ending in its
//! `DIALECT` ([`syntax::Dialect`]: its architecture, its registers' names
//! and how its threads are read), listed in [`DIALECTS`]. The assembly
//! dialects' threads come as one table ([`table`]) whose cells each
//! dialect lowers, with the operand helpers they share ([`operand`]).

pub(crate) mod aarch64;
pub(crate) mod c;
mod operand;
pub(crate) mod riscv;
pub(crate) mod syntax;
pub(crate) mod table;
pub(crate) mod x86;
pub(crate) mod x86_64;

use crate::ast::Arch;
use syntax::Dialect;

/// Every dialect, in the order an error lists them.
pub(crate) const DIALECTS: [Dialect; 5] = [
    c::DIALECT,
    x86::DIALECT,
    x86_64::DIALECT,
    aarch64::DIALECT,
    riscv::DIALECT,
];

/// The dialect herd names `name` on a test's first line.
pub(crate) fn by_name(name: &str) -> Option<&'static Dialect> {
    DIALECTS.iter().find(|d| d.arch.name() == name)
}

/// The dialect of `arch`.
pub(crate) fn of(arch: Arch) -> &'static Dialect {
    DIALECTS
        .iter()
        .find(|d| d.arch == arch)
        .expect("every Arch has its dialect in DIALECTS (dialect tests check)")
}

/// herd's names of the dialects, as an error lists them.
pub(crate) fn names() -> String {
    DIALECTS
        .iter()
        .map(|d| d.arch.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every dialect is found by its herd name, and no two share one.
    #[test]
    fn each_dialect_by_its_name() {
        for d in &DIALECTS {
            assert_eq!(by_name(d.arch.name()).map(|x| x.arch), Some(d.arch));
            assert_eq!(of(d.arch).arch, d.arch);
        }
        assert_eq!(names(), "C, X86, X86_64, AArch64, RISCV");
        assert!(by_name("MIPS").is_none());
    }
}
