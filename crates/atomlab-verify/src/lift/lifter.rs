//! What every architecture's lifter is ([`Lifter`]) and gives: the lifted
//! code ([`Lifted`]) or why it stops ([`Refusal`]).

use atomlab_audit::PluginFile;
use atomlab_litmus::Instr;

use super::state::{Locations, Registers};

/// What a lift gives: the code (branch targets relative to its start; a
/// target of `code.len()` ends it) and whether it read the LSE flag.
#[derive(Debug, Clone)]
pub struct Lifted {
    /// The instructions.
    pub code: Vec<Instr>,
    /// For each instruction of `code`, the address in the file of the
    /// machine instruction it was lifted from.
    pub origins: Vec<u64>,
    /// Whether an outline-atomics helper chose between LSE and LL/SC.
    pub reads_lse_flag: bool,
}

/// One lifter per architecture: the register that holds a function's
/// first argument, the litmus dialect the lifted code is judged in, and
/// the lift itself. The one list of lifted architectures is `lifter`.
pub trait Lifter {
    /// The register name of the first integer argument (`X0`, `a0`, `rdi`).
    fn first_argument(&self) -> &'static str;
    /// The register name of the second integer argument (`X1`, `a1`,
    /// `rsi`): push's item, pop's item pointer.
    fn second_argument(&self) -> &'static str;
    /// The register name an integer result is returned in (`X0`, `a0`,
    /// `rax`).
    fn result(&self) -> &'static str;
    /// The litmus architecture whose models judge the lifted code.
    fn litmus_arch(&self) -> atomlab_litmus::Arch;
    /// The machine instruction at `addr`, as a disassembler prints it.
    fn disassemble(&self, file: &PluginFile<'_>, addr: u64) -> Option<String>;
    /// The architecture's full barrier and its mnemonic (`--advise` tries
    /// adding it); `None`: not offered.
    fn full_barrier(&self) -> Option<(atomlab_litmus::Fence, &'static str)> {
        None
    }
    /// The acquire (or release) form of the disassembled `instruction`
    /// (`ldxr w1, [x0]` → `ldaxr`), for advice; `None` when there is none
    /// or it is not known.
    fn ordered_form(&self, instruction: &str, acquire: bool) -> Option<String> {
        let _ = (instruction, acquire);
        None
    }
    /// Lifts the function at `entry`, its first argument holding object
    /// `obj`'s address; `lse` chooses outline atomics' path (aarch64 only).
    fn lift(
        &self,
        file: &PluginFile<'_>,
        entry: u64,
        obj: usize,
        lse: bool,
        regs: &mut Registers,
        locs: &mut Locations,
    ) -> Result<Lifted, Refusal>;
}

/// Why a function cannot be lifted: the instruction or call, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Its address in the file.
    pub addr: u64,
    /// Where that is, by symbol (`tas_lock+0x8`).
    pub place: String,
    /// What it is and why it stops verify.
    pub what: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {:#x} ({})", self.what, self.addr, self.place)
    }
}
