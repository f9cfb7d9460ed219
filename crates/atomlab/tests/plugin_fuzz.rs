//! Fuzzing plugin descriptions (issue 33): random `atomlab_plugin()`
//! results written as C — ABI versions, names with control bytes or
//! thousands of bytes, variant counts from 0 to far too many, variants
//! pointers valid, NULL or wild, kinds inside and outside the ABI,
//! functions present or NULL, constructors that print or exit — built with
//! the C compiler and loaded by the real `atomlab bench lock`. Whatever
//! the description, atomlab answers with exit 0, 1 or 2 within its bound:
//! never a signal, never a panic, never a raw escape sequence on the
//! terminal, and nothing but its own document on stdout under `--json`.
//!
//! `cargo test` runs a fixed number of cases; ATOMLAB_FUZZ_SECS keeps
//! going with fresh seeds for that long (the fuzz step of `.ci/run`), and
//! ATOMLAB_FUZZ_SEED replays a reported case. Without a C compiler it
//! skips with a message (and fails under ATOMLAB_REQUIRE_CROSS=1).

mod cli_support;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cli_support::{command, stderr, text};

const CC: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-linux-gnu-gcc"
} else if cfg!(target_arch = "riscv64") {
    "riscv64-linux-gnu-gcc"
} else {
    "cc"
};

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
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// A C string literal of a random name: a good one, an empty one, one
/// with control bytes and escape sequences, or a very long one.
fn name(rng: &mut Rng, i: u64) -> String {
    if rng.below(3) > 0 {
        return format!("\"fz-{i}\"");
    }
    match rng.below(6) {
        0 => "NULL".to_string(),
        1 => "\"\"".to_string(),
        2 => format!("\"evil\\x1b[31m{i}\\n| forged | row |\""),
        3 => format!("\"{}\"", "n".repeat(1 + rng.below(9000) as usize)),
        4 => format!("\"a b/{i}\\x07\""),
        _ => format!("\"fz-{i}\""),
    }
}

/// The C source of one random plugin.
fn source(rng: &mut Rng) -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n#include \"atomlab.h\"\n\
         static void *o_new(void) { return calloc(1, 64); }\n\
         static void o_nop(void *p) { (void)p; }\n\
         static int o_try(void *p) { (void)p; return 1; }\n\
         static void *q_new(size_t n) { (void)n; return calloc(1, 64); }\n\
         static int q_push(void *q, uint64_t i) { (void)q; (void)i; return 1; }\n\
         static int q_pop(void *q, uint64_t *i) { (void)q; (void)i; return 0; }\n\
         static int r_put(void *p) { (void)p; return 0; }\n\
         static uint64_t o_read(void *p) { (void)p; return 0; }\n",
    );
    let n_array = 1 + rng.below(4);
    let _ = writeln!(c, "static const struct atomlab_variant vs[] = {{");
    for i in 0..n_array {
        let kind = match rng.below(16) {
            0 => 0,
            1 => 5 + rng.below(1000),
            2..=4 => 2 + rng.below(3),
            _ => 1,
        };
        let f = |rng: &mut Rng, good: &str| {
            if rng.chance(16) {
                "NULL".to_string()
            } else {
                good.to_string()
            }
        };
        let u = match kind {
            2 => format!(
                ".u.spsc = {{ .new_ = {}, .push = {}, .pop = {}, .free_ = {} }}",
                f(rng, "q_new"),
                f(rng, "q_push"),
                f(rng, "q_pop"),
                f(rng, "free")
            ),
            3 => format!(
                ".u.refcount = {{ .new_ = {}, .get = {}, .put = {}, .free_ = {} }}",
                f(rng, "o_new"),
                f(rng, "o_nop"),
                f(rng, "r_put"),
                f(rng, "free")
            ),
            4 => format!(
                ".u.op = {{ .new_ = {}, .op = {}, .read = {}, .free_ = {} }}",
                f(rng, "o_new"),
                f(rng, "o_nop"),
                f(rng, "o_read"),
                f(rng, "free")
            ),
            _ => format!(
                ".u.lock = {{ .new_ = {}, .lock = {}, .unlock = {}, .try_lock = {}, .free_ = {} }}",
                f(rng, "o_new"),
                f(rng, "o_nop"),
                f(rng, "o_nop"),
                f(rng, "o_try"),
                f(rng, "free")
            ),
        };
        let _ = writeln!(c, "  {{ .name = {}, .kind = {kind}, {u} }},", name(rng, i));
    }
    let _ = writeln!(c, "}};");
    let abi = match rng.below(12) {
        0 => 0,
        1 => 2 + rng.below(100),
        _ => 1,
    };
    let n_variants = match rng.below(12) {
        0 => 0,
        1 => 1025 + rng.below(1 << 20),
        2 => n_array + 1 + rng.below(3),
        _ => 1 + rng.below(n_array),
    };
    let variants = match rng.below(12) {
        0 => "NULL".to_string(),
        1 => format!(
            "(const struct atomlab_variant *)(uintptr_t){:#x}",
            rng.next() & !7
        ),
        _ => "vs".to_string(),
    };
    let _ = writeln!(
        c,
        "static const struct atomlab_plugin pl = {{ .abi_version = {abi}, .name = {}, \
         .n_variants = {n_variants}, .variants = {variants} }};",
        name(rng, 99)
    );
    if rng.chance(8) {
        let body = match rng.below(3) {
            0 => "printf(\"{\\\"constructor\\\": 1}\\n\");",
            1 => "exit((int)0);",
            _ => "fprintf(stderr, \"\\x1b[2J\\n\");",
        };
        let _ = writeln!(
            c,
            "__attribute__((constructor)) static void at_load(void) {{ {body} }}"
        );
    }
    let entry = if rng.chance(10) {
        "return (const struct atomlab_plugin *)0;"
    } else {
        "return &pl;"
    };
    let _ = writeln!(
        c,
        "const struct atomlab_plugin *atomlab_plugin(void) {{ {entry} }}"
    );
    c
}

/// Builds `src` into `dir/NAME.so`; `None` when the compiler is missing.
fn build(dir: &Path, name: &str, src: &str) -> Option<Result<PathBuf, String>> {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let so = dir.join(format!("{name}.so"));
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    let out = Command::new(CC)
        .args(["-O1", "-w", "-shared", "-fPIC", "-I"])
        .arg(include)
        .arg("-o")
        .arg(&so)
        .arg(&c)
        .output();
    match out {
        Ok(o) if o.status.success() => Some(Ok(so)),
        Ok(o) => Some(Err(text(&o.stderr))),
        Err(_) => None,
    }
}

/// One case: the plugin of `seed`, loaded by `bench lock --json`.
fn one(dir: &Path, seed: u64) -> Option<i32> {
    let mut rng = Rng(seed | 1);
    let src = source(&mut rng);
    let so = match build(dir, &format!("fz{seed:x}"), &src)? {
        Ok(so) => so,
        Err(e) => panic!("seed {seed}: the generated C did not build: {e}\n{src}"),
    };
    let began = Instant::now();
    let o = command()
        .args([
            "--no-save",
            "--json",
            "bench",
            "lock",
            "--plugin",
            so.to_str().unwrap(),
            "--threads",
            "1",
            "-d",
            "10ms",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--variant",
            "all",
        ])
        .output()
        .unwrap();
    let took = began.elapsed();
    let err = stderr(&o);
    let replay = format!("replay: ATOMLAB_FUZZ_SEED={seed}\n{src}\nstderr: {err}");
    assert!(
        matches!(o.status.code(), Some(0..=2)),
        "seed {seed}: exit {:?}\n{replay}",
        o.status
    );
    assert!(!err.contains("panicked"), "{replay}");
    // Only atomlab's own words may reach the terminal: the plugin's
    // stderr output is the plugin's, and said as such; atomlab's lines
    // ("atomlab: …") carry no raw escape.
    for l in err.lines().filter(|l| l.starts_with("atomlab")) {
        assert!(!l.contains('\x1b'), "{replay}");
    }
    if o.status.code() == Some(2) {
        assert!(o.stdout.is_empty(), "{replay}");
    } else {
        let doc: Result<serde_json::Value, _> = serde_json::from_slice(&o.stdout);
        assert!(
            doc.is_ok(),
            "stdout is not the document: {}\n{replay}",
            text(&o.stdout)
        );
    }
    // The load bound is 10 s; a constructor in the generated code never
    // waits.
    assert!(took < Duration::from_secs(20), "{took:?}\n{replay}");
    let _ = std::fs::remove_file(&so);
    let _ = std::fs::remove_file(so.with_extension("c"));
    o.status.code()
}

#[test]
fn random_plugin_descriptions_never_take_atomlab_down() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-fuzz");
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(seed) = std::env::var("ATOMLAB_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        one(&dir, seed);
        return;
    }
    let secs: u64 = std::env::var("ATOMLAB_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let began = Instant::now();
    let mut cases = 0u64;
    let mut by_exit = [0u64; 3];
    loop {
        // A fixed set first (the same every run), then fresh seeds.
        let seed = if cases < 12 {
            0x9e37_79b9_7f4a_7c15u64.wrapping_mul(cases + 1)
        } else {
            start.wrapping_add(cases.wrapping_mul(0x9e37_79b9))
        };
        let Some(code) = one(&dir, seed) else {
            let msg = format!("plugin fuzzing skipped: no C compiler `{CC}`");
            if std::env::var("ATOMLAB_REQUIRE_CROSS").is_ok_and(|v| v == "1") {
                panic!("{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set");
            }
            let _ = writeln!(std::io::stderr(), "{msg}");
            return;
        };
        by_exit[code as usize] += 1;
        cases += 1;
        if cases >= 12 && began.elapsed() >= Duration::from_secs(secs) {
            break;
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "plugin fuzzing: {cases} descriptions in {:.1} s: exit 0 {}, 1 {}, 2 {}",
        began.elapsed().as_secs_f64(),
        by_exit[0],
        by_exit[1],
        by_exit[2]
    );
    // The generator reaches both sides: descriptions refused and run.
    assert!(by_exit[2] > 0 && by_exit[0] + by_exit[1] > 0, "{by_exit:?}");
}
