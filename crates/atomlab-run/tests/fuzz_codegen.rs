//! Fuzzing the code generators: random valid X86, AArch64 and RISCV
//! tests, and mutations of the project's litmus tests (as atomlab-model's
//! parser fuzzing does), go through parse → prepare → run. Preparing never
//! panics; whatever prepares runs to completion; for the random valid
//! tests every state the CPU shows is one its model (x86-TSO, aarch64,
//! riscv) allows.
//!
//! `cargo test` runs a few hundred cases; more with
//! `ATOMLAB_FUZZ_CASES=5000 nice -n 19 cargo test --release -p atomlab-run --test fuzz_codegen -- --nocapture`.

use std::path::Path;
use std::time::{Duration, Instant};

use atomlab_model::{check_test, CheckOptions, ModelOutcome};
use atomlab_run::{generate, prepare, run, Isa, PrepareOptions, RunError, RunOptions};

mod support;
use support::has_release_then_acquire;

/// xorshift64*, seeded per case so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

fn cases() -> u64 {
    std::env::var("ATOMLAB_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150)
}

fn small() -> RunOptions {
    RunOptions {
        size: 20,
        runs: 3,
        timeout: Some(Duration::from_secs(10)),
        ..RunOptions::default()
    }
}

/// A random X86 test over x, y, z with 2 or 3 threads of 1 to 4
/// instructions, in the subset atomlab-litmus parses.
fn random_x86(rng: &mut Rng) -> String {
    let locs = ["x", "y", "z"];
    let regs = ["EAX", "EBX", "ECX"];
    let nthreads = 2 + rng.below(2);
    let mut cols: Vec<Vec<String>> = Vec::new();
    for _ in 0..nthreads {
        let n = 1 + rng.below(4);
        let mut col = Vec::new();
        for _ in 0..n {
            let l = rng.pick(&locs);
            let r = rng.pick(&regs);
            let k = 1 + rng.below(3);
            col.push(match rng.below(12) {
                0 | 1 => format!("MOV [{l}],${k}"),
                2 | 3 => format!("MOV {r},[{l}]"),
                4 => "MFENCE".into(),
                5 => format!("XCHG [{l}],{r}"),
                6 => format!("LOCK XADD [{l}],{r}"),
                7 => format!("LOCK ADD [{l}],${k}"),
                8 => format!("LOCK CMPXCHG [{l}],{r}"),
                9 => format!("ADD {r},${k}"),
                10 => format!("MOV {r},${k}"),
                _ => rng
                    .pick(&["LFENCE", "SFENCE", "LOCK INC [x]", "LOCK DEC [y]"])
                    .into(),
            });
        }
        cols.push(col);
    }
    litmus_table(
        "X86 fuzz\n{ x=0; y=0; z=0; }\n".into(),
        &cols,
        "exists (x=1 /\\ 0:EAX=0)\n",
    )
}

/// A litmus test from its head (name line and initial state), one column
/// of instructions per thread, and its condition.
fn litmus_table(mut src: String, cols: &[Vec<String>], condition: &str) -> String {
    let rows = cols.iter().map(Vec::len).max().unwrap_or(0);
    let header: Vec<String> = (0..cols.len()).map(|t| format!("P{t}")).collect();
    src.push_str(&format!(" {} ;\n", header.join(" | ")));
    for i in 0..rows {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| c.get(i).cloned().unwrap_or_default())
            .collect();
        src.push_str(&format!(" {} ;\n", cells.join(" | ")));
    }
    src.push_str(condition);
    src
}

/// A random AArch64 test over x, y, z with 2 or 3 threads of 1 to 5
/// instructions: plain, acquire/release and RCpc accesses, barriers, an
/// address and a data dependency, exclusives, LSE atomics and CAS.
fn random_aarch64(rng: &mut Rng) -> String {
    let nthreads = 2 + rng.below(2);
    let mut cols: Vec<Vec<String>> = Vec::new();
    for _ in 0..nthreads {
        let n = 1 + rng.below(5);
        let mut col = Vec::new();
        for _ in 0..n {
            // X1, X2, X3 hold x, y, z's addresses; X4..X7 are data.
            let a = 1 + rng.below(3);
            let r = 4 + rng.below(4);
            let q = 4 + rng.below(4);
            col.push(match rng.below(16) {
                0 | 1 => format!("STR W{r},[X{a}]"),
                2 | 3 => format!("LDR W{r},[X{a}]"),
                4 => format!("LDAR W{r},[X{a}]"),
                5 => format!("STLR W{r},[X{a}]"),
                6 => format!("LDAPR W{r},[X{a}]"),
                7 => format!("MOV W{r},#{}", 1 + rng.below(3)),
                8 => format!("EOR W8,W{r},W{r}"),
                9 => format!("LDR W{q},[X{a},W8,SXTW]"),
                10 => format!("ADD W{r},W{q},#1"),
                11 => rng
                    .pick(&["DMB ISH", "DMB ISHLD", "DMB ISHST", "DSB SY", "ISB"])
                    .into(),
                12 => format!("SWPAL W{r},W{q},[X{a}]"),
                13 => format!("LDADD W{r},W{q},[X{a}]"),
                14 => format!("CAS W{r},W{q},[X{a}]"),
                _ => format!("LDXR W{r},[X{a}]"),
            });
        }
        cols.push(col);
    }
    let mut src = String::from("AArch64 fuzz\n{ x=0; y=0; z=0;");
    for t in 0..nthreads {
        src.push_str(&format!(" {t}:X1=x; {t}:X2=y; {t}:X3=z;"));
    }
    src.push_str(" }\n");
    litmus_table(src, &cols, "exists (x=1 /\\ 0:X4=0)\n")
}

/// Random valid AArch64 tests: the code generator never panics and, on
/// any host, either generates code or refuses with a reason; on an
/// aarch64 host the code runs to completion and every state it shows is
/// one `aarch64` allows (under qemu-user a store-release before a later
/// load-acquire is not kept in order, hardware_aarch64.rs: such tests are
/// only run there).
#[test]
fn random_aarch64_tests_generate_and_run_within_the_model() {
    let n = cases();
    let (mut generated, mut ran) = (0, 0);
    for seed in 1..=n {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let src = random_aarch64(&mut rng);
        let test = atomlab_litmus::parse("fuzz.litmus", &src).unwrap_or_else(|e| {
            panic!("seed {seed}: the generator wrote a test the parser refuses: {e}\n{src}")
        });
        match generate(&test, Isa::AArch64, &PrepareOptions::default()) {
            Ok(_) => generated += 1,
            Err(RunError::Unencodable { .. }) => continue,
            Err(e) => panic!("seed {seed}: {e}\n{src}"),
        }
        if std::env::consts::ARCH != "aarch64" {
            continue;
        }
        let program = match prepare(&test) {
            Ok(p) => p,
            Err(RunError::MissingFeature { .. }) => continue,
            Err(e) => panic!("seed {seed}: {e}\n{src}"),
        };
        let r = run(&program, &small()).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        assert!(!r.timed_out, "seed {seed}: did not finish\n{src}");
        assert_eq!(r.instances(), 60, "seed {seed}\n{src}");
        ran += 1;
        if atomlab_core::Machine::detect().emulated && has_release_then_acquire(&program.compiled) {
            continue;
        }
        let opts = CheckOptions {
            deadline: Some(Instant::now() + Duration::from_secs(5)),
            ..CheckOptions::default()
        };
        if let ModelOutcome::Done(d) = &check_test(&test, &["aarch64"], &opts)[0] {
            for (s, count, _) in &r.histogram {
                assert!(
                    d.states.iter().any(|(x, _)| x == s),
                    "seed {seed}: state {s:?} seen {count} times is forbidden by aarch64\n{src}"
                );
            }
        }
    }
    eprintln!("{n} random AArch64 tests: {generated} generated, {ran} ran");
    assert!(generated * 2 >= n, "only {generated} of {n} generated");
}

/// A random RISCV test over x, y, z with 2 or 3 threads of 1 to 5
/// instructions: loads and stores of `w` and `d` width, fences of every
/// pair of sets and FENCE.TSO, diy7's annotated `lw.aq`/`sw.rl`…, an
/// address and a data dependency, LR/SC and AMOs with `aq`/`rl`.
fn random_riscv(rng: &mut Rng) -> String {
    let nthreads = 2 + rng.below(2);
    let sets = ["r", "w", "rw"];
    let ann = ["", ".aq", ".rl", ".aqrl"];
    // One width per test: a location accessed with two widths is
    // mixed-size, which the model refuses to judge.
    let w = rng.pick(&["w", "d"]);
    let mut cols: Vec<Vec<String>> = Vec::new();
    for _ in 0..nthreads {
        let n = 1 + rng.below(5);
        let mut col = Vec::new();
        for _ in 0..n {
            // x5, x6, x7 hold x, y, z's addresses; x10..x13 are data.
            let a = 5 + rng.below(3);
            let r = 10 + rng.below(4);
            let q = 10 + rng.below(4);
            col.push(match rng.below(16) {
                0 | 1 => format!("s{w} x{r},0(x{a})"),
                2 | 3 => format!("l{w} x{r},0(x{a})"),
                4 => format!("l{w}{} x{r},0(x{a})", rng.pick(&ann)),
                5 => format!("s{w}{} x{r},0(x{a})", rng.pick(&ann)),
                6 => format!("ori x{r},x0,{}", 1 + rng.below(3)),
                7 => format!("fence {},{}", rng.pick(&sets), rng.pick(&sets)),
                8 => "fence.tso".into(),
                9 => format!("xor x14,x{r},x{r}"),
                10 => format!("add x15,x{a},x14"),
                11 => format!("l{w} x16,0(x15)"),
                12 => format!("addi x{r},x{q},1"),
                13 => format!(
                    "amo{}.{w}{} x{r},x{q},(x{a})",
                    rng.pick(&["swap", "add", "and", "or", "xor", "max", "minu"]),
                    rng.pick(&ann)
                ),
                14 => format!("lr.{w}{} x{r},0(x{a})", rng.pick(&ann)),
                _ => format!("sc.{w}{} x{r},x{q},0(x{a})", rng.pick(&ann)),
            });
        }
        cols.push(col);
    }
    let mut src = String::from("RISCV fuzz\n{ x=0; y=0; z=0;");
    for t in 0..nthreads {
        src.push_str(&format!(" {t}:x5=x; {t}:x6=y; {t}:x7=z; {t}:x14=1;"));
    }
    src.push_str(" }\n");
    litmus_table(src, &cols, "exists (x=1 /\\ 0:x10=0)\n")
}

/// Random valid RISCV tests: the code generator never panics and, on any
/// host, either generates code or refuses with a reason (the address
/// `x15`, computed from x14 that starts at 1, is refused until an `xor`
/// zeroes x14: the address check); on a riscv64 host the code runs to
/// completion and every state it shows is one `riscv` allows.
#[test]
fn random_riscv_tests_generate_and_run_within_the_model() {
    let n = cases();
    let (mut generated, mut refused, mut ran) = (0, 0, 0);
    for seed in 1..=n {
        let mut rng = Rng(seed.wrapping_mul(0xA24B_AED4_963E_E407) | 1);
        let src = random_riscv(&mut rng);
        let test = atomlab_litmus::parse("fuzz.litmus", &src).unwrap_or_else(|e| {
            panic!("seed {seed}: the generator wrote a test the parser refuses: {e}\n{src}")
        });
        match generate(&test, Isa::RiscV64, &PrepareOptions::default()) {
            Ok(_) => generated += 1,
            Err(RunError::Unencodable { .. }) => {
                refused += 1;
                continue;
            }
            Err(e) => panic!("seed {seed}: {e}\n{src}"),
        }
        if std::env::consts::ARCH != "riscv64" {
            continue;
        }
        let program = prepare(&test).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        let r = run(&program, &small()).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        assert!(!r.timed_out, "seed {seed}: did not finish\n{src}");
        assert_eq!(r.instances(), 60, "seed {seed}\n{src}");
        ran += 1;
        let opts = CheckOptions {
            deadline: Some(Instant::now() + Duration::from_secs(5)),
            ..CheckOptions::default()
        };
        if let ModelOutcome::Done(d) = &check_test(&test, &["riscv"], &opts)[0] {
            for (s, count, _) in &r.histogram {
                assert!(
                    d.states.iter().any(|(x, _)| x == s),
                    "seed {seed}: state {s:?} seen {count} times is forbidden by riscv\n{src}"
                );
            }
        }
    }
    eprintln!("{n} random RISCV tests: {generated} generated, {refused} refused, {ran} ran");
    assert!(generated * 2 >= n, "only {generated} of {n} generated");
}

#[test]
fn random_valid_tests_run_within_x86tso() {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: the host is not x86-64");
        return;
    }
    let n = cases();
    let mut checked = 0;
    for seed in 1..=n {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let src = random_x86(&mut rng);
        let test = atomlab_litmus::parse("fuzz.litmus", &src).unwrap_or_else(|e| {
            panic!("seed {seed}: the generator wrote a test the parser refuses: {e}\n{src}")
        });
        let program = prepare(&test).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        let r = run(&program, &small()).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        assert!(!r.timed_out, "seed {seed}: did not finish\n{src}");
        assert_eq!(r.instances(), 60, "seed {seed}\n{src}");
        let opts = CheckOptions {
            deadline: Some(Instant::now() + Duration::from_secs(5)),
            ..CheckOptions::default()
        };
        if let ModelOutcome::Done(d) = &check_test(&test, &["x86tso"], &opts)[0] {
            checked += 1;
            for (s, count, _) in &r.histogram {
                assert!(
                    d.states.iter().any(|(x, _)| x == s),
                    "seed {seed}: state {s:?} seen {count} times is forbidden by x86tso\n{src}"
                );
            }
        }
    }
    eprintln!("{n} random tests ran, {checked} compared with x86tso");
    assert!(
        checked * 2 >= n,
        "only {checked} of {n} were judged by x86tso"
    );
}

fn seeds() -> Vec<String> {
    let mut files = Vec::new();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    files.extend(atomlab_litmus::inputs::litmus_files(
        &here.join("../atomlab-model/tests/litmus"),
    ));
    files.extend(atomlab_litmus::inputs::litmus_files(
        &here.join("tests/litmus"),
    ));
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect()
}

const TOKENS: &[&str] = &[
    "[x]",
    "[EAX]",
    "[EBX]",
    "$1",
    "$-1",
    "EAX",
    "EBX",
    "MOV",
    "LOCK",
    "XCHG",
    "MFENCE",
    ";",
    "|",
    ",",
    "0:EAX=x;",
    "{",
    "}",
    "P2",
    "*x",
    "r0",
    "atomic_load(x)",
    "9999999999999",
    "\n",
];

#[test]
fn mutated_tests_prepare_without_panics_and_run_to_completion() {
    let seeds = seeds();
    assert!(!seeds.is_empty());
    let n = cases() * 2;
    let (mut parsed, mut prepared, mut ran) = (0, 0, 0);
    for case in 1..=n {
        let mut rng = Rng(case.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
        let mut src = seeds[rng.below(seeds.len())].clone().into_bytes();
        for _ in 0..1 + rng.below(2) {
            let at = rng.below(src.len() + 1);
            match rng.below(7) {
                0 if !src.is_empty() => {
                    let end = (at + rng.below(8)).min(src.len());
                    src.drain(at.min(end)..end);
                }
                1 => {
                    let t = rng.pick(TOKENS).as_bytes().to_vec();
                    src.splice(at..at, t);
                }
                2 if at < src.len() => {
                    let end = (at + rng.below(16)).min(src.len());
                    let dup = src[at..end].to_vec();
                    src.splice(at..at, dup);
                }
                3 => src.truncate(at.max(src.len() / 2)),
                _ => {
                    // Swap one token of the seed for another of the alphabet.
                    let t = rng.pick(TOKENS);
                    let text = String::from_utf8_lossy(&src).to_string();
                    if let Some(i) = text.find(rng.pick(TOKENS)) {
                        let end = (i + 3).min(text.len());
                        if text.is_char_boundary(end) {
                            src = format!("{}{t}{}", &text[..i], &text[end..]).into_bytes();
                        }
                    }
                }
            }
        }
        let text = String::from_utf8_lossy(&src).to_string();
        let Ok(test) = atomlab_litmus::parse("mutant.litmus", &text) else {
            continue;
        };
        parsed += 1;
        let Ok(program) = prepare(&test) else {
            continue;
        };
        prepared += 1;
        if matches!(std::env::consts::ARCH, "x86_64" | "aarch64" | "riscv64") {
            let r = run(&program, &small()).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
            assert!(!r.timed_out, "case {case}: did not finish\n{text}");
            ran += 1;
        }
    }
    eprintln!("{n} mutants: {parsed} parsed, {prepared} prepared, {ran} ran to completion");
    // Backends exist for x86-64, aarch64 and riscv64: elsewhere every test
    // is refused.
    assert!(
        parsed > 0
            && (prepared > 0
                || !matches!(std::env::consts::ARCH, "x86_64" | "aarch64" | "riscv64"))
    );
}
