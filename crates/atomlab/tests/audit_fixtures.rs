//! `atomlab audit` on fixtures compiled here with Debian's cross compilers:
//! every count must equal what GNU objdump shows for the same file, and the
//! verdicts must be right, with symbols and stripped.
//!
//! Without the cross tools these tests print that they skipped and why;
//! with ATOMLAB_REQUIRE_CROSS=1 (set by .ci/run) a missing tool fails them.

mod audit_support;
mod cli_support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

use audit_support::*;

const A64_CC: &str = "aarch64-linux-gnu-gcc";
const A64_OBJDUMP: &str = "aarch64-linux-gnu-objdump";
const A64_STRIP: &str = "aarch64-linux-gnu-strip";

fn is_helper(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("__aarch64_") else {
        return false;
    };
    ["cas", "swp", "ldadd", "ldclr", "ldeor", "ldset"]
        .iter()
        .any(|op| rest.starts_with(op))
        && !rest.contains("have_lse")
}

/// What objdump says about an unstripped aarch64 file, split as atomlab
/// splits it: outside helpers, inside helpers, calls to helpers.
struct Reference {
    by_mnemonic: BTreeMap<String, u64>,
    outside: BTreeMap<String, u64>,
    inside: BTreeMap<String, u64>,
    calls: BTreeMap<String, u64>,
    helpers: BTreeSet<String>,
    /// Atomic read-modify-writes per function (LSE, store-exclusive closing
    /// a loop, helper calls), outside helpers.
    per_function: BTreeMap<String, u64>,
}

fn reference(file: &Path) -> Reference {
    let lines = objdump(A64_OBJDUMP, &[], file);
    let by_mnemonic = tally(&lines, aarch64_key);
    let mut r = Reference {
        by_mnemonic,
        outside: BTreeMap::new(),
        inside: BTreeMap::new(),
        calls: BTreeMap::new(),
        helpers: BTreeSet::new(),
        per_function: BTreeMap::new(),
    };
    for l in &lines {
        let helper = is_helper(&l.function);
        if helper {
            r.helpers.insert(l.function.clone());
        }
        if let Some(class) = aarch64_class(&l.mnemonic) {
            let side = if helper {
                &mut r.inside
            } else {
                &mut r.outside
            };
            *side.entry(class.to_string()).or_insert(0) += 1;
            // Each of these fixtures' store-exclusives closes one loop.
            if class == "store_exclusive" {
                *side.entry("llsc_loop".into()).or_insert(0) += 1;
            }
            if !helper && (class == "lse" || class == "store_exclusive") {
                *r.per_function.entry(l.function.clone()).or_insert(0) += 1;
            }
        }
        if (l.mnemonic == "bl" || l.mnemonic == "b") && !helper {
            if let Some(target) = l
                .operands
                .split_once('<')
                .map(|(_, t)| t.trim_end_matches('>'))
            {
                if is_helper(target) {
                    *r.calls.entry(target.to_string()).or_insert(0) += 1;
                    *r.per_function.entry(l.function.clone()).or_insert(0) += 1;
                }
            }
        }
    }
    r
}

fn classes_without_helper_rows(v: &serde_json::Value) -> BTreeMap<String, u64> {
    let mut m = counts(v);
    m.remove("outline_call");
    m.remove("outline_helper");
    m
}

fn check_variant(dir: &Path, name: &str, flags: &[&str], sources: &[&str], verdict: &str) {
    let bin = dir.join(name);
    compile(A64_CC, flags, sources, &bin);
    let stripped = dir.join(format!("{name}-stripped"));
    run_ok(
        std::process::Command::new(A64_STRIP)
            .arg("-o")
            .arg(&stripped)
            .arg(&bin),
    );
    let r = reference(&bin);
    let (a, code) = audit_json(&bin, &[]);
    assert_eq!(code, 0, "{name}: exit code");
    assert_eq!(a["verdict"]["kind"], verdict, "{name}: {}", a["verdict"]);
    assert_eq!(
        counts(&a["by_mnemonic"]),
        r.by_mnemonic,
        "{name}: by mnemonic"
    );
    assert_eq!(
        classes_without_helper_rows(&a["by_class"]),
        r.outside,
        "{name}: classes outside helpers"
    );
    assert_eq!(counts(&a["in_helpers"]), r.inside, "{name}: inside helpers");
    assert_eq!(
        counts(&a["outline_calls"]),
        r.calls,
        "{name}: outline calls"
    );
    let helpers: BTreeSet<String> = a["helpers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(helpers, r.helpers, "{name}: helpers");
    assert_eq!(
        class(&a["by_class"], "outline_call"),
        r.calls.values().sum::<u64>()
    );
    let per_function: BTreeMap<String, u64> = a["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["atomics"].as_u64() > Some(0))
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["atomics"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per_function, r.per_function, "{name}: per function");

    // Stripped: same verdict, counts, helper names (rebuilt from their shape)
    // and per-function tallies, now keyed by address.
    let (s, code) = audit_json(&stripped, &[]);
    assert_eq!(code, 0);
    assert_eq!(s["has_symtab"], false);
    assert_eq!(s["verdict"], a["verdict"], "{name} stripped: verdict");
    for key in ["by_mnemonic", "by_class", "in_helpers", "outline_calls"] {
        assert_eq!(s[key], a[key], "{name} stripped: {key}");
    }
    let shape_names: BTreeSet<String> = s["helpers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            assert_eq!(h["found_by"], "shape");
            h["name"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        shape_names, helpers,
        "{name} stripped: helper names by shape"
    );
    let by_addr = |v: &serde_json::Value| -> BTreeMap<u64, u64> {
        v["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["atomics"].as_u64() > Some(0))
            .map(|f| (f["addr"].as_u64().unwrap(), f["atomics"].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(
        by_addr(&s),
        by_addr(&a),
        "{name} stripped: per-function by address"
    );
}

#[test]
fn aarch64_fixtures_match_objdump() {
    if !have_tools(
        "aarch64_fixtures_match_objdump",
        &[A64_CC, A64_OBJDUMP, A64_STRIP],
    ) {
        return;
    }
    let dir = scratch("aarch64");
    let c = &["atomics.c"];
    check_variant(
        &dir,
        "llsc",
        &["-march=armv8-a", "-mno-outline-atomics"],
        c,
        "llsc_only",
    );
    check_variant(&dir, "lse", &["-march=armv8.1-a"], c, "inline_lse");
    // GCC 12's default on aarch64 is -moutline-atomics.
    check_variant(&dir, "outline", &[], c, "outline_atomics");
    check_variant(
        &dir,
        "rare-forms",
        &["-march=armv8.4-a+rcpc"],
        &["asm_main.c", "asm_a64.S"],
        "mixed",
    );
}

#[test]
fn aarch64_require_gates() {
    if !have_tools("aarch64_require_gates", &[A64_CC]) {
        return;
    }
    let dir = scratch("require");
    let c = &["atomics.c"];
    let llsc = dir.join("llsc");
    compile(
        A64_CC,
        &["-march=armv8-a", "-mno-outline-atomics"],
        c,
        &llsc,
    );
    let lse = dir.join("lse");
    compile(A64_CC, &["-march=armv8.1-a"], c, &lse);
    let outline = dir.join("outline");
    compile(A64_CC, &[], c, &outline);
    let cases = [
        (&llsc, "no-llsc", 1),
        (&llsc, "outline", 1),
        (&llsc, "lse", 1),
        (&lse, "lse", 0),
        (&lse, "no-llsc", 0),
        (&lse, "outline", 1),
        (&outline, "outline", 0),
        (&outline, "no-llsc", 0),
        (&outline, "lse", 1),
    ];
    for (file, req, want) in cases {
        let (a, code) = audit_json(file, &["--require", req]);
        assert_eq!(
            code,
            want,
            "{} --require {req}: {}",
            file.display(),
            a["require"]
        );
        assert_eq!(a["require"]["met"], want == 0);
    }
    // The common JSON envelope: the machine, then one record per binary with
    // its class counts as metrics and the --require outcome as its verdict.
    let out = atomlab()
        .args(["audit", "--json", "--require", "outline"])
        .arg(&outline)
        .arg(&lse)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["machine"]["arch"].is_string());
    let records = doc["records"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["capability"], "audit");
    assert_eq!(records[0]["verdict"], "PASS");
    assert_eq!(records[1]["verdict"], "FAIL");
    for rec in records {
        let bin = &rec["detail"];
        for m in rec["metrics"].as_array().unwrap() {
            let name = m["name"].as_str().unwrap();
            assert_eq!(m["unit"], "count");
            assert_eq!(m["samples"][0].as_f64(), bin["by_class"][name].as_f64());
        }
        assert_eq!(rec["notes"][0], bin["verdict"]["words"]);
    }

    // Several files: one failing is enough for exit 1; the table says which.
    let out = atomlab()
        .args(["audit", "--require", "outline"])
        .arg(&outline)
        .arg(&lse)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    // The verdict column wraps at 100 columns (the cells beside its
    // continuation lines are empty): read it as one text.
    let flat = text
        .replace('|', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains("--require outline: met")
            && flat.contains(
                "--require outline: NOT met: 10 inline LSE instructions (SIGILL on ARMv8.0)"
            ),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 of 2 binaries"));
}

#[test]
fn aarch64_table_output_names_the_verdict_and_functions() {
    if !have_tools("aarch64_table_output", &[A64_CC]) {
        return;
    }
    let dir = scratch("table");
    let bin = dir.join("outline");
    compile(A64_CC, &[], &["atomics.c"], &bin);
    let out = run_ok(atomlab().args(["audit", "--by-function=3"]).arg(&bin));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("outline atomics: LSE chosen at run time (ARMv8.0-safe)"),
        "{text}"
    );
    assert!(text.contains("__aarch64_ldadd4_sync"), "{text}");
    // Three function rows under the function header.
    let rows = text
        .lines()
        .skip_while(|l| !l.starts_with("| function"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .count();
    assert_eq!(rows, 3, "{text}");
}

#[test]
fn x86_64_fixture_matches_objdump() {
    if !have_tools("x86_64_fixture_matches_objdump", &["gcc", "objdump"]) {
        return;
    }
    if std::env::consts::ARCH != "x86_64" {
        let _ = writeln!(
            std::io::stderr(),
            "x86_64_fixture_matches_objdump: skipped: host gcc does not target x86-64"
        );
        return;
    }
    let dir = scratch("x86");
    let bin = dir.join("x86");
    compile("gcc", &["-mcx16"], &["atomics.c"], &bin);
    let lines = objdump("objdump", &["-M", "intel"], &bin);
    let want = tally(&lines, |l| {
        let m = l.mnemonic.as_str();
        if m == "lock" {
            let op = l.operands.split_whitespace().next().unwrap_or("");
            return Some(format!("lock {op}"));
        }
        match m {
            "mfence" | "lfence" | "sfence" | "cmpxchg8b" | "cmpxchg16b" => Some(m.to_string()),
            "xchg" if l.operands.contains("PTR") => Some("xchg".into()),
            _ => None,
        }
    });
    let (a, code) = audit_json(&bin, &[]);
    assert_eq!(code, 0);
    assert_eq!(counts(&a["by_mnemonic"]), want);
    assert_eq!(a["verdict"]["kind"], "x86_locked");
    assert!(want.contains_key("lock cmpxchg16b"), "{want:?}");
    for fence in ["mfence", "lfence", "sfence"] {
        assert!(want.contains_key(fence), "{want:?}");
    }
    assert_eq!(class(&a["by_class"], "wide_cas"), want["lock cmpxchg16b"]);
    assert_eq!(
        class(&a["by_class"], "xchg_mem"),
        want.get("xchg").copied().unwrap_or(0)
    );
}

fn riscv64_reference(od: &str, bin: &Path) -> BTreeMap<String, u64> {
    let lines = objdump(od, &[], bin);
    tally(&lines, |l| {
        let m = l.mnemonic.as_str();
        let ok = m.starts_with("amo")
            || m.starts_with("lr.")
            || m.starts_with("sc.")
            || m == "fence"
            || m == "fence.tso";
        ok.then(|| {
            if m == "fence" && !l.operands.is_empty() {
                format!("fence {}", l.operands)
            } else {
                m.to_string()
            }
        })
    })
}

#[test]
fn riscv64_fixtures_match_objdump() {
    let (cc, od) = ("riscv64-linux-gnu-gcc", "riscv64-linux-gnu-objdump");
    if !have_tools("riscv64_fixtures_match_objdump", &[cc, od]) {
        return;
    }
    let dir = scratch("riscv64");
    let c = dir.join("rv64");
    // Sub-word atomics are libatomic calls on RISC-V with GCC 12.
    compile(cc, &["-latomic"], &["atomics.c"], &c);
    let asm = dir.join("rv64-rare-forms");
    compile(cc, &[], &["asm_main.c", "asm_rv64.S"], &asm);
    for bin in [&c, &asm] {
        let want = riscv64_reference(od, bin);
        let (a, code) = audit_json(bin, &[]);
        assert_eq!(code, 0);
        assert_eq!(counts(&a["by_mnemonic"]), want, "{}", bin.display());
        let sum = |prefix: &str| -> u64 {
            want.iter()
                .filter(|(k, _)| k.starts_with(prefix))
                .map(|(_, n)| n)
                .sum()
        };
        let (amo, sc) = (sum("amo"), sum("sc."));
        assert!(amo > 0 && sc > 0, "{want:?}");
        assert_eq!(class(&a["by_class"], "amo"), amo);
        // Each fixture SC closes one LR/SC loop.
        assert_eq!(class(&a["by_class"], "llsc_loop"), sc);
        assert_eq!(
            class(&a["by_class"], "barrier"),
            sum("fence"),
            "{}",
            bin.display()
        );
        assert_eq!(a["verdict"]["kind"], "riscv_amo_and_lrsc");
    }
    let want = riscv64_reference(od, &asm);
    assert_eq!(want.get("fence.tso"), Some(&1), "{want:?}");
    assert_eq!(want.get("lr.d.aqrl"), Some(&1), "{want:?}");
}

#[test]
fn aarch64_plt_calls_to_helpers() {
    if !have_tools(
        "aarch64_plt_calls_to_helpers",
        &[A64_CC, A64_OBJDUMP, A64_STRIP],
    ) {
        return;
    }
    let dir = scratch("plt");
    let lib = dir.join("libplthelper.so");
    compile(
        A64_CC,
        &["-shared", "-fPIC", "-march=armv8.1-a"],
        &["plt_helper.c"],
        &lib,
    );
    let bin = dir.join("plt-main");
    let libdir = format!("-L{}", dir.display());
    compile(A64_CC, &[&libdir, "-lplthelper"], &["plt_main.c"], &bin);
    let stripped = dir.join("plt-main-stripped");
    run_ok(
        std::process::Command::new(A64_STRIP)
            .arg("-o")
            .arg(&stripped)
            .arg(&bin),
    );
    let want = tally(&objdump(A64_OBJDUMP, &[], &bin), |l| {
        let target = l.operands.split_once('<')?.1.trim_end_matches('>');
        let helper = target.strip_suffix("@plt")?;
        (l.mnemonic == "bl" && is_helper(helper)).then(|| helper.to_string())
    });
    assert!(
        !want.is_empty(),
        "the fixture must call a helper through the PLT"
    );
    for file in [&bin, &stripped] {
        let (a, code) = audit_json(file, &[]);
        assert_eq!(code, 0);
        assert_eq!(counts(&a["outline_calls"]), want, "{}", file.display());
        assert_eq!(a["verdict"]["kind"], "outline_atomics");
    }
}

#[test]
fn aarch64_asm_without_size_or_cfi_still_counts_when_it_has_a_symbol() {
    if !have_tools("aarch64_asm_without_size_or_cfi", &[A64_CC]) {
        return;
    }
    let dir = scratch("unsized");
    let src = std::fs::read_to_string(support_dir().join("asm_a64.S")).unwrap();
    let bare: String = src
        .lines()
        .filter(|l| !l.contains(".size") && !l.contains(".cfi_"))
        .map(|l| format!("{l}\n"))
        .collect();
    let asm = dir.join("bare.S");
    std::fs::write(&asm, bare).unwrap();
    let bin = dir.join("bare");
    run_ok(
        std::process::Command::new(A64_CC)
            .args(["-O2", "-march=armv8.4-a+rcpc", "-o"])
            .arg(&bin)
            .arg(support_dir().join("asm_main.c"))
            .arg(&asm),
    );
    let (a, _) = audit_json(&bin, &[]);
    // rare_forms: 8 LSE instructions and 2 LL/SC loops, none lost as "data".
    assert_eq!(class(&a["by_class"], "lse"), 8, "{}", a["by_class"]);
    assert_eq!(class(&a["by_class"], "llsc_loop"), 2, "{}", a["by_class"]);
    assert!(a["outside_functions"].as_object().unwrap().is_empty());
}

/// Calls to `<__atomic_…@plt>` in objdump's listing, by function.
fn libatomic_reference(od: &str, flags: &[&str], bin: &Path) -> BTreeMap<String, u64> {
    tally(&objdump(od, flags, bin), |l| {
        let target = l.operands.split_once('<')?.1.trim_end_matches('>');
        let name = target.strip_suffix("@plt")?;
        let call = ["bl", "b", "call", "jmp", "jal", "j", "tail"].contains(&l.mnemonic.as_str());
        (call && name.starts_with("__atomic_")).then(|| name.to_string())
    })
}

#[test]
fn libatomic_calls_match_objdump() {
    let arches = [
        ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-objdump"),
        ("riscv64-linux-gnu-gcc", "riscv64-linux-gnu-objdump"),
        ("gcc", "objdump"),
    ];
    for (cc, od) in arches {
        if !have_tools("libatomic_calls_match_objdump", &[cc, od]) {
            continue;
        }
        if cc == "gcc" && std::env::consts::ARCH != "x86_64" {
            continue;
        }
        let dir = scratch(&format!("libatomic-{cc}"));
        let bin = dir.join("wide");
        compile(
            cc,
            &["-mcx16", "-latomic"][usize::from(cc != "gcc")..],
            &["wide.c"],
            &bin,
        );
        let want = libatomic_reference(od, &[], &bin);
        assert_eq!(want.len(), 2, "{cc}: {want:?}");
        let (a, code) = audit_json(&bin, &[]);
        assert_eq!(code, 0);
        assert_eq!(counts(&a["libatomic_calls"]), want, "{cc}");
        assert_eq!(a["verdict"]["kind"], "libatomic_only", "{cc}");
        assert_eq!(
            class(&a["by_class"], "libatomic_call"),
            want.values().sum::<u64>()
        );
    }
    // riscv64's sub-word atomics are libatomic calls too (tail calls by c.j).
    let (cc, od) = ("riscv64-linux-gnu-gcc", "riscv64-linux-gnu-objdump");
    if have_tools("libatomic_calls_match_objdump", &[cc, od]) {
        let bin = scratch("libatomic-rv-subword").join("rv64");
        compile(cc, &["-latomic"], &["atomics.c"], &bin);
        let want = libatomic_reference(od, &[], &bin);
        assert!(!want.is_empty());
        let (a, _) = audit_json(&bin, &[]);
        assert_eq!(counts(&a["libatomic_calls"]), want);
        assert!(a["verdict"]["words"]
            .as_str()
            .unwrap()
            .ends_with("calls to libatomic (it picks its implementation at run time)"));
    }
}
