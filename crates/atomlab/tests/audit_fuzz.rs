//! Mutation fuzzing of the audit's input path: fixtures (aarch64 with and
//! without symbols, riscv64, x86-64, and a `.deb` when one is at hand) are
//! corrupted the way broken files are — header fields, program and section
//! header entries set to boundary values, truncation, byte flips, splices —
//! and `atomlab_audit::audit_bytes` / the `.deb` reader must return a
//! result or an error, never panic.
//!
//! `.deb` packages are also built from scratch with hostile members (issue
//! 33): names with control bytes, `..` paths, GNU long names and pax paths,
//! sizes declared far beyond what follows, members and archives cut short.
//! The reader must not panic, must allocate little more than the package
//! itself (never what a header claims), must show every name with its
//! control characters made visible, and every error about a member must
//! name it.
//!
//! `cargo test` runs a short, fixed number of cases per fixture. For a long
//! run set ATOMLAB_FUZZ_SECS (BENCHMARKS.md records how long it ran clean);
//! ATOMLAB_FUZZ_SEED replays a reported case.

mod audit_support;
mod cli_support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use atomlab_core::text::{is_plain, shown};
use audit_support::*;

/// The system allocator, counting each thread's live bytes and their peak
/// (thread-local: the other test of this binary allocates at the same
/// time), so that a case can be held to a memory bound.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    // try_with: nothing to count once the thread's locals are gone.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is passed to System unchanged; the counting beside it
// touches only thread-locals that allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Runs `f`, with the most this thread had allocated at once while it ran
/// (bytes, beyond what it held before).
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let r = f();
    let peak = PEAK.with(Cell::get);
    (r, (peak - base).max(0) as usize)
}

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

/// Bytes a hostile name is made of: letters, separators, dots, control
/// bytes (ESC, BEL, newline, CR, DEL, NUL), a C1 control and a
/// bidirectional override in UTF-8, and a byte that is not UTF-8.
fn hostile_name(rng: &mut Rng) -> Vec<u8> {
    const PIECES: &[&[u8]] = &[
        b"a",
        b"lib",
        b"x.so",
        b"/",
        b"/",
        b".",
        b"..",
        b"../",
        b"./",
        b"\x1b[31m",
        b"\x1b]0;t\x07",
        b"\n| forged | row |",
        b"\r",
        b"\x7f",
        b"\x00",
        b"\xc2\x9b",
        b"\xe2\x80\xae",
        b"\xff",
        b" ",
        b"usr/bin/",
    ];
    let mut name = Vec::new();
    if rng.below(3) == 0 {
        name.extend_from_slice(b"./");
    }
    let pieces = 1 + rng.below(12);
    for _ in 0..pieces {
        name.extend_from_slice(PIECES[rng.below(PIECES.len())]);
    }
    if rng.below(8) == 0 {
        // Past ustar's 100 bytes: only a long name or pax path holds it.
        name.extend(std::iter::repeat_n(b'n', 100 + rng.below(300)));
    }
    name
}

/// A size declared in a header: the truth, or far more.
fn declared(rng: &mut Rng, real: usize) -> u64 {
    match rng.below(8) {
        0 => (2 << 30) - 1,
        1 => 2 << 30,
        2 => (2 << 30) + 1,
        3 => 1 << (20 + rng.below(40)),
        4 => real as u64 + 1 + rng.below(4096) as u64,
        _ => real as u64,
    }
}

/// One hostile package: its bytes and the names of its tar members as the
/// reader must show them (`./x` as `/x`, control characters visible).
fn hostile_deb(rng: &mut Rng) -> (Vec<u8>, Vec<String>) {
    let mut tar = Vec::new();
    let mut names = Vec::new();
    for _ in 0..1 + rng.below(6) {
        let name = hostile_name(rng);
        // The name in the header itself, when a long name or pax path
        // before it gives the real one: also the member's name when the
        // entry before swallows that (by declaring more than it holds).
        let fallback = format!("fallback-{}", names.len());
        // What the reader finds: a header's name field and a GNU long
        // name are C strings (up to a NUL; the field holds 100 bytes), a
        // pax path is a length-counted string.
        let c_string = |b: &[u8]| b.split(|&c| c == 0).next().unwrap_or(b).to_vec();
        let (header_name, stored): (Vec<u8>, Vec<u8>) = match rng.below(4) {
            0 => {
                deb::long_name(&mut tar, &name);
                names.push(fallback.clone());
                (fallback.into_bytes(), c_string(&name))
            }
            1 => {
                deb::pax_path(&mut tar, &name);
                names.push(fallback.clone());
                (fallback.into_bytes(), name.clone())
            }
            _ => (name.clone(), c_string(&name[..name.len().min(100)])),
        };
        let text = String::from_utf8_lossy(&stored);
        let text = match text.strip_prefix("./") {
            Some(rest) => format!("/{rest}"),
            None => text.into_owned(),
        };
        names.push(shown(&text, 4096));
        // ELF magic mostly, so that the member is read.
        let mut data: Vec<u8> = if rng.below(4) == 0 {
            b"#!/bin/sh\n".to_vec()
        } else {
            b"\x7fELF\x02\x01\x01".to_vec()
        };
        data.extend((0..rng.below(3000)).map(|_| rng.next() as u8));
        let kind = [b'0', b'0', b'0', b'\0', b'5', b'2', b'L', b'x', b'S', b'7'][rng.below(10)];
        let size = match kind {
            // A long name or pax header claiming more than any path: the
            // reader must refuse it, not read it (had it been read, the
            // next member's name would be this entry's bytes).
            b'L' | b'x' => (1 << 20) + rng.below(1 << 30) as u64,
            _ => declared(rng, data.len()),
        };
        tar.extend_from_slice(&deb::tar_header(&header_name, size, kind));
        tar.extend_from_slice(&data);
        while !tar.len().is_multiple_of(512) {
            tar.push(0);
        }
    }
    if rng.below(2) == 0 {
        deb::tar_end(&mut tar);
    }
    if rng.below(4) == 0 {
        let keep = rng.below(tar.len() + 1);
        tar.truncate(keep);
    }
    let data_name = [
        "data.tar",
        "data.tar",
        "data.tar",
        "data.tar\x1b[1m",
        "data.tar.gz",
    ][rng.below(5)];
    let mut deb = deb::ar(&[
        ("debian-binary", b"2.0\n"),
        ("control.tar", &deb::control_tar("fuzz")),
        (data_name, &tar),
    ]);
    if rng.below(6) == 0 {
        let keep = rng.below(deb.len() + 1);
        deb.truncate(keep);
    }
    (deb, names)
}

/// Issue 33: hostile members never panic the reader, never make it hold
/// more than a small multiple of the package, and every name it gives
/// back, in an input's path or an error, is plain text; an error about a
/// tar member names it (or says it came before the first).
#[test]
fn hostile_deb_members_are_refused_by_name_in_bounded_memory() {
    let budget = std::env::var("ATOMLAB_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs);
    let seed0: u64 = std::env::var("ATOMLAB_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xdeb_a70b);
    let start = Instant::now();
    let (mut cases, mut errors, mut elf_files) = (0u64, 0u64, 0u64);
    loop {
        let seed = seed0 ^ cases.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut rng = Rng(seed | 1);
        let (input, names) = hostile_deb(&mut rng);
        let replay = format!("replay with ATOMLAB_FUZZ_SEED={seed0}, case {cases}");
        let (r, peak) = peak_of(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let mut out = atomlab_audit::input::Expanded::default();
                atomlab_audit::input::unpack_deb("fuzz.deb", &input, &mut out);
                let paths: Vec<String> = out.inputs.iter().map(|i| i.path.clone()).collect();
                let errs: Vec<String> = out.errors.iter().map(|e| e.to_string()).collect();
                (paths, errs)
            }))
        });
        let Ok((paths, errs)) = r else {
            panic!("the .deb reader panicked ({replay})");
        };
        // The ELF files read are copied into `inputs`: twice the package,
        // and room for the reader's own buffers.
        let bound = 2 * input.len() + (4 << 20);
        assert!(
            peak <= bound,
            "{peak} bytes allocated at once for a {}-byte package ({replay})",
            input.len()
        );
        for p in &paths {
            assert!(is_plain(p), "a raw name in {p:?} ({replay})");
        }
        for e in &errs {
            assert!(is_plain(e), "a raw name in the error {e:?} ({replay})");
            // The data archive's errors (not the ar archive's), and a
            // member refused for its size.
            let about_a_member = (e.contains("bad Debian package: data.tar")
                && !e.contains("unknown compression"))
                || e.contains("an ELF file of");
            if about_a_member {
                assert!(
                    e.contains("at its first member")
                        || names.iter().any(|n| e.contains(n.as_str())),
                    "the error names no member of {names:?}: {e} ({replay})"
                );
            }
        }
        cases += 1;
        errors += errs.len() as u64;
        elf_files += paths.len() as u64;
        let done = match budget {
            Some(b) => start.elapsed() >= b,
            None => cases >= 20_000,
        };
        if done {
            break;
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "audit_fuzz: {cases} hostile packages in {:.1} s: {elf_files} ELF members read, {errors} errors, no panic, no raw name",
        start.elapsed().as_secs_f64()
    );
}
