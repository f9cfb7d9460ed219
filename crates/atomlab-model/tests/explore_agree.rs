//! The exploration engine against the enumerating one (the reference): on
//! every test both finish, the same Observation, the same set of final
//! states (with their race marks), the same refusals. Over the reference
//! corpus (../shared/litmus and ../shared/litmus-more, skipped with a
//! message where ../shared is absent) and over seeded random C tests, which
//! every model judges (the hardware ones through the C11 mappings).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use atomlab_litmus::Test;
use atomlab_model::{check_test, CheckOptions, Engine, ModelOutcome, MODEL_NAMES};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "litmus") {
            out.push(p);
        }
    }
}

/// What must agree: per model, the observation and states, or the kind of
/// refusal. `None` when the reference timed out (nothing to compare).
fn verdicts(test: &Test, engine: Engine, limit: Duration) -> Option<Vec<(String, Vec<String>)>> {
    let opts = CheckOptions {
        engine,
        deadline: Some(Instant::now() + limit),
        ..CheckOptions::default()
    };
    let mut out = Vec::new();
    for o in check_test(test, MODEL_NAMES, &opts) {
        out.push(match o {
            ModelOutcome::Done(r) => (
                format!("{}: {} racy={}", r.model, r.observation.word(), r.racy),
                r.states.iter().map(|s| format!("{s:?}")).collect(),
            ),
            ModelOutcome::Timeout { .. } => return None,
            ModelOutcome::NotApplicable { model, .. } => (format!("{model}: n/a"), Vec::new()),
            ModelOutcome::Failed { model, error } => {
                (format!("{model}: failed {error}"), Vec::new())
            }
        });
    }
    Some(out)
}

/// Compares both engines on `test`; `Err` describes a disagreement.
fn agree(name: &str, test: &Test) -> Result<bool, String> {
    let Some(want) = verdicts(test, Engine::Enumerate, Duration::from_secs(20)) else {
        return Ok(false);
    };
    let got = verdicts(test, Engine::Explore, Duration::from_secs(60))
        .ok_or_else(|| format!("{name}: explore timed out where enumerate finished"))?;
    if want != got {
        let diff: Vec<String> = want
            .iter()
            .zip(&got)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| {
                let extra: Vec<&String> = b.1.iter().filter(|s| !a.1.contains(s)).take(3).collect();
                let missing: Vec<&String> = a.1.iter().filter(|s| !b.1.contains(s)).take(3).collect();
                format!(
                    "  enumerate {} ({} states), explore {} ({} states); explore's extra {extra:?}, missing {missing:?}",
                    a.0,
                    a.1.len(),
                    b.0,
                    b.1.len()
                )
            })
            .collect();
        return Err(format!("{name}:\n{}", diff.join("\n")));
    }
    Ok(true)
}

fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    p.join("litmus").is_dir().then_some(p)
}

#[test]
fn engines_agree_on_the_reference_corpus() {
    let Some(shared) = shared() else {
        eprintln!("skipped: ../shared/litmus is absent (the reference corpus lives outside the repository)");
        return;
    };
    let mut files = Vec::new();
    walk(&shared.join("litmus"), &mut files);
    walk(&shared.join("litmus-more"), &mut files);
    let (mut compared, mut refused, mut timed_out) = (0, 0, 0);
    let mut bad = Vec::new();
    for f in &files {
        let Ok(test) = atomlab_litmus::parse_file(f) else {
            refused += 1;
            continue;
        };
        match agree(&f.display().to_string(), &test) {
            Ok(true) => compared += 1,
            Ok(false) => timed_out += 1,
            Err(e) => bad.push(e),
        }
    }
    eprintln!(
        "explore vs enumerate: {compared} tests agree under every model, {} disagree, {refused} not parsed, {timed_out} too slow to enumerate",
        bad.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(compared > 500, "only {compared} tests compared");
}

/// A small deterministic generator (xorshift64*), so a failure names a
/// seed that replays it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len() as u64) as usize]
    }
}

/// A random C litmus test: 2-3 threads of 1-3 operations over one or two
/// atomic locations and at times a non-atomic one: loads, stores (some of a
/// loaded register: a data dependency), exchanges, fetch-adds and fences,
/// in every memory order; the condition names every register and location
/// so that whole final states are compared.
fn random_test(seed: u64) -> String {
    let mut g = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let nthreads = 2 + g.below(2) as usize;
    let natomic = 1 + g.below(2) as usize;
    let with_na = g.below(3) == 0;
    let locs: Vec<&str> = ["x", "y"][..natomic].to_vec();
    let mut params: Vec<String> = locs.iter().map(|l| format!("atomic_int* {l}")).collect();
    if with_na {
        params.push("int* z".into());
    }
    let params = params.join(",");
    let mut value = 0;
    let mut text = format!("C R{seed}\n{{}}\n\n");
    let mut regs = Vec::new();
    for t in 0..nthreads {
        text += &format!("P{t} ({params}) {{\n");
        let mut nregs = 0;
        for _ in 0..1 + g.below(3) {
            let loc = locs[g.below(locs.len() as u64) as usize];
            let store_order = g.pick(&["relaxed", "release", "seq_cst"]);
            let load_order = g.pick(&["relaxed", "acquire", "seq_cst"]);
            let rmw_order = g.pick(&["relaxed", "acquire", "release", "acq_rel", "seq_cst"]);
            match g.below(9) {
                0..=2 => {
                    value += 1;
                    let v = if nregs > 0 && g.below(4) == 0 {
                        format!("r{}", nregs - 1)
                    } else {
                        value.to_string()
                    };
                    text += &format!(
                        "  atomic_store_explicit({loc},{v},memory_order_{store_order});\n"
                    );
                }
                3..=4 => {
                    text += &format!(
                        "  int r{nregs} = atomic_load_explicit({loc},memory_order_{load_order});\n"
                    );
                    regs.push(format!("{t}:r{nregs}"));
                    nregs += 1;
                }
                5 => {
                    value += 1;
                    text += &format!(
                        "  int r{nregs} = atomic_exchange_explicit({loc},{value},memory_order_{rmw_order});\n"
                    );
                    regs.push(format!("{t}:r{nregs}"));
                    nregs += 1;
                }
                6 => {
                    text += &format!(
                        "  int r{nregs} = atomic_fetch_add_explicit({loc},1,memory_order_{rmw_order});\n"
                    );
                    regs.push(format!("{t}:r{nregs}"));
                    nregs += 1;
                }
                7 => {
                    let o = g.pick(&["acquire", "release", "acq_rel", "seq_cst"]);
                    text += &format!("  atomic_thread_fence(memory_order_{o});\n");
                }
                _ if with_na => {
                    if g.below(2) == 0 {
                        value += 1;
                        text += &format!("  *z = {value};\n");
                    } else {
                        text += &format!("  int r{nregs} = *z;\n");
                        regs.push(format!("{t}:r{nregs}"));
                        nregs += 1;
                    }
                }
                _ => {
                    text += &format!(
                        "  int r{nregs} = atomic_load_explicit({loc},memory_order_relaxed);\n"
                    );
                    regs.push(format!("{t}:r{nregs}"));
                    nregs += 1;
                }
            }
        }
        text += "}\n\n";
    }
    let mut conj: Vec<String> = regs.iter().map(|r| format!("{r}={}", g.below(3))).collect();
    for l in &locs {
        conj.push(format!("{l}={}", g.below(3)));
    }
    text += &format!("exists ({})\n", conj.join(" /\\ "));
    text
}

#[test]
fn engines_agree_on_random_tests() {
    // ATOMLAB_EXPLORE_SEEDS=N runs more (the default keeps `cargo test` quick).
    let n: u64 = std::env::var("ATOMLAB_EXPLORE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let mut compared = 0;
    let mut bad = Vec::new();
    for seed in 0..n {
        let src = random_test(seed);
        let test = match atomlab_litmus::parse(&format!("random-{seed}.litmus"), &src) {
            Ok(t) => t,
            Err(e) => {
                panic!("the generator wrote a test the parser refuses (seed {seed}): {e}\n{src}")
            }
        };
        match agree(&format!("seed {seed}"), &test) {
            Ok(true) => compared += 1,
            Ok(false) => {}
            Err(e) => bad.push(format!("{e}\n{src}")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(compared * 10 >= n * 9, "only {compared} of {n} compared");
}

#[test]
fn the_generator_varies_its_tests() {
    let a = random_test(1);
    let b = random_test(2);
    assert_ne!(a, b);
    assert!(a.contains("exists ("));
}
