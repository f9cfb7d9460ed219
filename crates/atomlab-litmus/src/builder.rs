//! What a parser builds while it reads a test: its locations and threads,
//! and the registers of each thread by name.

use crate::ast::*;

/// The things being built while parsing: locations and threads.
pub(crate) struct Builder {
    pub arch: Arch,
    pub locations: Vec<String>,
    pub threads: Vec<Thread>,
    /// The access width in bits of each location accessed at a constant
    /// address so far (X86_64, RISC-V), to refuse mixed-size tests.
    pub sizes: Vec<(LocId, u32)>,
    /// Registers the initial state sets, as (thread, name): C code may use
    /// them without declaring them, as herd7 allows (`{ 0:r4=y; }` and
    /// `WRITE_ONCE(*x, r4);`).
    pub init_regs: Vec<(usize, String)>,
}

impl Builder {
    pub(crate) fn loc(&mut self, name: &str) -> LocId {
        if let Some(i) = self.locations.iter().position(|l| l == name) {
            return i;
        }
        self.locations.push(name.to_string());
        self.locations.len() - 1
    }

    pub(crate) fn thread(&mut self, id: usize) -> &mut Thread {
        while self.threads.len() <= id {
            let n = self.threads.len();
            self.threads.push(Thread {
                id: n,
                regs: Vec::new(),
                init: Vec::new(),
                code: Vec::new(),
            });
        }
        &mut self.threads[id]
    }
}

/// Adds register `name` to `t` if new and returns its index.
pub(crate) fn reg_of(t: &mut Thread, name: &str) -> Reg {
    if let Some(r) = t.reg(name) {
        return r;
    }
    t.regs.push(name.to_string());
    t.regs.len() - 1
}
