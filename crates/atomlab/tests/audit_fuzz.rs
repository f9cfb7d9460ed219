//! Mutation fuzzing of the audit's input path: fixtures (aarch64 with and
//! without symbols, riscv64, x86-64, and a `.deb` when one is at hand) are
//! corrupted the way broken files are — header fields, program and section
//! header entries set to boundary values, truncation, byte flips, splices —
//! and `atomlab_audit::audit_bytes` / the `.deb` reader must return a
//! result or an error, never panic.
//!
//! `cargo test` runs a short, fixed number of cases per fixture. For a long
//! run set ATOMLAB_FUZZ_SECS (BENCHMARKS.md records how long it ran clean);
//! ATOMLAB_FUZZ_SEED replays a reported case.

mod audit_support;
mod cli_support;

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use audit_support::*;

/// xorshift64*: deterministic, seedable, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn u64_at(d: &[u8], off: usize) -> u64 {
    d.get(off..off + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .unwrap_or(0)
}

fn boundary(rng: &mut Rng, len: usize) -> u64 {
    match rng.below(7) {
        0 => 0,
        1 => u64::MAX,
        2 => len as u64,
        3 => len as u64 + 1,
        4 => (len as u64).wrapping_sub(1),
        5 => 1u64 << rng.below(64),
        _ => rng.next(),
    }
}

/// One mutated copy of `orig`.
fn mutate(orig: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut d = orig.to_vec();
    let len = d.len();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        match rng.below(6) {
            // ELF header bytes.
            0 => {
                let i = rng.below(64.min(len));
                d[i] = rng.next() as u8;
            }
            // A field of a section header (e_shoff at 0x28, 64-byte entries).
            1 | 2 => {
                let shoff = u64_at(orig, 0x28) as usize;
                let shnum = u16::from_le_bytes([orig[0x3c], orig[0x3d]]) as usize;
                let (base, n) = if rng.below(3) == 0 {
                    // Program headers: e_phoff at 0x20, 56-byte entries.
                    let phoff = u64_at(orig, 0x20) as usize;
                    let phnum = u16::from_le_bytes([orig[0x38], orig[0x39]]) as usize;
                    (phoff + 56 * rng.below(phnum.max(1)), 56)
                } else {
                    (shoff + 64 * rng.below(shnum.max(1)), 64)
                };
                let off = base + 8 * rng.below(n / 8);
                let v = boundary(rng, len);
                if off + 8 <= len {
                    d[off..off + 8].copy_from_slice(&v.to_le_bytes());
                }
            }
            // Truncation.
            3 => {
                let keep = rng.below(len);
                d.truncate(keep.max(1));
                return d;
            }
            // Byte flips anywhere.
            4 => {
                for _ in 0..1 + rng.below(16) {
                    let i = rng.below(d.len());
                    d[i] ^= 1 << rng.below(8);
                }
            }
            // Splice a chunk over another place.
            _ => {
                let n = 1 + rng.below(256.min(len));
                let from = rng.below(len - n + 1);
                let to = rng.below(len - n + 1);
                let chunk = orig[from..from + n].to_vec();
                d[to..to + n].copy_from_slice(&chunk);
            }
        }
    }
    d
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = scratch("fuzz");
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    if have_tools(
        "audit_fuzz (aarch64)",
        &["aarch64-linux-gnu-gcc", "aarch64-linux-gnu-strip"],
    ) {
        let a = dir.join("a64");
        compile("aarch64-linux-gnu-gcc", &[], &["atomics.c"], &a);
        let s = dir.join("a64-stripped");
        run_ok(
            std::process::Command::new("aarch64-linux-gnu-strip")
                .arg("-o")
                .arg(&s)
                .arg(&a),
        );
        files.push(("aarch64".into(), a));
        files.push(("aarch64 stripped".into(), s));
    }
    if have_tools("audit_fuzz (riscv64)", &["riscv64-linux-gnu-gcc"]) {
        let r = dir.join("rv64");
        compile("riscv64-linux-gnu-gcc", &["-latomic"], &["atomics.c"], &r);
        files.push(("riscv64".into(), r));
    }
    if std::env::consts::ARCH == "x86_64" && have_tools("audit_fuzz (x86-64)", &["gcc"]) {
        let x = dir.join("x86");
        compile("gcc", &["-mcx16"], &["atomics.c"], &x);
        files.push(("x86-64".into(), x));
    }
    files
        .into_iter()
        .map(|(n, p)| (n, std::fs::read(p).unwrap()))
        .collect()
}

fn small_deb() -> Option<Vec<u8>> {
    let dir = std::env::var("ATOMLAB_AUDIT_DEBS").ok()?;
    let p = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().contains("libatomic1_"))?;
    std::fs::read(p).ok()
}

#[test]
fn mutated_inputs_never_panic() {
    let corpus = corpus();
    if corpus.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "audit_fuzz: skipped: no compiler to build a corpus"
        );
        return;
    }
    let deb = small_deb();
    let budget = std::env::var("ATOMLAB_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs);
    let seed0: u64 = std::env::var("ATOMLAB_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_a70b);
    let start = Instant::now();
    let mut cases = 0u64;
    let mut audited = 0u64;
    let mut round = 0u64;
    loop {
        for (name, orig) in &corpus {
            let seed = seed0 ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ cases;
            let mut rng = Rng(seed | 1);
            let input = mutate(orig, &mut rng);
            let r = catch_unwind(AssertUnwindSafe(|| {
                atomlab_audit::audit_bytes("fuzz", &input).is_ok()
            }));
            match r {
                Ok(ok) => audited += ok as u64,
                Err(_) => panic!(
                    "audit_bytes panicked on a mutated {name} (replay with ATOMLAB_FUZZ_SEED={seed0}, case {cases})"
                ),
            }
            cases += 1;
        }
        if let Some(deb) = &deb {
            let mut rng = Rng((seed0 ^ round) | 1);
            let input = mutate(deb, &mut rng);
            let r = catch_unwind(AssertUnwindSafe(|| {
                let mut out = atomlab_audit::input::Expanded::default();
                atomlab_audit::input::unpack_deb("fuzz.deb", &input, &mut out);
                for i in out.inputs {
                    let _ = atomlab_audit::audit_bytes(&i.path, &i.data);
                }
            }));
            assert!(r.is_ok(), "the .deb reader panicked (round {round})");
            cases += 1;
        }
        round += 1;
        let done = match budget {
            Some(b) => start.elapsed() >= b,
            None => round >= 400,
        };
        if done {
            break;
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "audit_fuzz: {cases} mutated inputs in {:.1} s without a panic ({audited} still audited, the rest rejected with an error)",
        start.elapsed().as_secs_f64()
    );
    assert!(cases > 0);
}
