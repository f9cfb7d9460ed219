//! `atomlab verify` on the other kinds of include/atomlab.h: aarch64
//! builds of tests/plugins/verify_kinds.c made by Debian's cross gcc, with
//! `-mno-outline-atomics` (LL/SC loops), `-march=armv8.1-a` (inline LSE)
//! and the default (libgcc's outline atomics, checked with and without
//! LSE). The kernel-ordered refcount and the atomic fetch_add op PASS
//! under aarch64 and sc; the refcount whose put is relaxed FAILs under
//! aarch64 (a use the freer does not see) and PASSes under sc; the racy op
//! FAILs under both; each FAIL names the property that broke. Lamport's
//! ring (its slot indexed by a masked register, pop storing through its
//! item pointer) PASSes under aarch64 and sc with release/acquire indices;
//! with the producer's publish of head relaxed it FAILs under aarch64 (the
//! consumer reads a slot before the item reached it) and PASSes under sc.
//! A `new_` whose object verify cannot know is refused, saying why. The
//! riscv64 and x86-64 builds (the same source, by Debian's riscv64 cross
//! gcc and the host cc) give the refcount and op verdicts of their own
//! models, from the object as their own `new_` leaves it.
//!
//! Without the cross compiler the tests skip with a message, and fail
//! instead under ATOMLAB_REQUIRE_CROSS=1 (as CI sets).

mod cli_support;
mod verify_support;

use std::path::{Path, PathBuf};

use cli_support::{atomlab, stderr};
use verify_support::{build_plugin, verdicts, AARCH64, HOST, RISCV};

/// verify_kinds.c built for aarch64 with `flags` (and -O2) as `name.so`.
fn build(name: &str, flags: &[&str]) -> Option<PathBuf> {
    let flags: Vec<&str> = ["-O2"].iter().chain(flags).copied().collect();
    build_plugin(
        AARCH64,
        "verify_kinds.c",
        "plugins-verify-kinds",
        name,
        &flags,
    )
}

/// `atomlab --json verify` of `so` with `args`: the exit code and the
/// records by variant and model, each (verdict or "REFUSED", its reason,
/// the record).
fn records(so: &Path, args: &[&str]) -> (Option<i32>, Vec<serde_json::Value>) {
    let mut a = vec![
        "--no-save",
        "--json",
        "verify",
        "--plugin",
        so.to_str().unwrap(),
    ];
    a.extend_from_slice(args);
    let o = atomlab(&a);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("verify --json: {e}\n{}", stderr(&o)));
    (
        o.status.code(),
        doc["records"].as_array().cloned().unwrap_or_default(),
    )
}

/// The records of `variant` under `model`.
fn rows<'r>(
    recs: &'r [serde_json::Value],
    variant: &str,
    model: &str,
) -> Vec<&'r serde_json::Value> {
    recs.iter()
        .filter(|r| r["variant"] == variant && r["parameters"]["model"] == model)
        .collect()
}

fn reason(r: &serde_json::Value) -> &str {
    r["notes"][0].as_str().unwrap_or("")
}

fn zoo(name: &str, flags: &[&str], cpus: usize) {
    let Some(so) = build(name, flags) else { return };
    let o = atomlab(&[
        "--no-save",
        "verify",
        "--plugin",
        so.to_str().unwrap(),
        "--model",
        "aarch64,sc",
    ]);
    // Reasons wrap at the terminal's width: joined back for the searches.
    let out = String::from_utf8_lossy(&o.stdout).replace("\n  ", " ");
    assert_eq!(
        o.status.code(),
        Some(1),
        "a broken refcount, a racy op and a relaxed ring FAIL: exit 1\n{out}{}",
        stderr(&o)
    );
    // Every kind is checked without --variant, each with its client in the
    // legend.
    for kind in ["spsc", "refcount", "op"] {
        assert!(out.contains(&format!("client {kind}: ")), "{name}\n{out}");
    }
    for v in ["refcount", "op-fetch-add", "op-no-read"] {
        for m in ["aarch64", "sc"] {
            assert_eq!(
                verdicts(&out, v, m),
                vec!["PASS"; cpus],
                "{name} {v} {m}\n{out}"
            );
        }
    }
    assert_eq!(
        verdicts(&out, "refcount-relaxed-put", "aarch64"),
        vec!["FAIL"; cpus],
        "{name}\n{out}"
    );
    assert_eq!(
        verdicts(&out, "refcount-relaxed-put", "sc"),
        vec!["PASS"; cpus],
        "{name}\n{out}"
    );
    // The racy op's increment is a plain load and store: no RMW, so no
    // outline helper, one row per model; it loses an update under sc too.
    for m in ["aarch64", "sc"] {
        assert_eq!(
            verdicts(&out, "op-racy-add", m),
            ["FAIL"],
            "{name} {m}\n{out}"
        );
    }
    // Lamport's ring: no RMW, so no outline helper and one row per model.
    // Release/acquire indices keep FIFO under aarch64; a relaxed publish of
    // head lets the consumer read a slot before its item; sc allows neither.
    for m in ["aarch64", "sc"] {
        assert_eq!(
            verdicts(&out, "ring", m),
            ["PASS"],
            "{name} ring {m}\n{out}"
        );
    }
    assert_eq!(
        verdicts(&out, "ring-relaxed-head", "aarch64"),
        ["FAIL"],
        "{name}\n{out}"
    );
    assert_eq!(
        verdicts(&out, "ring-relaxed-head", "sc"),
        ["PASS"],
        "{name}\n{out}"
    );
    assert!(
        out.contains("ring-relaxed-head FAIL under aarch64: FIFO broken: the consumer popped ")
            && out.contains(
                "was never pushed: a slot read before the producer's write of it was visible"
            ),
        "{name}\n{out}"
    );
    // Each FAIL names the property that broke, with its counterexample.
    assert!(
        out.contains("refcount-relaxed-put FAIL under aarch64")
            && out.contains("early \"last\": T")
            && out.contains("is not visible to the thread that frees the object"),
        "{name}\n{out}"
    );
    assert!(
        out.contains("op-racy-add FAIL under sc: read() returned 1 instead of 2"),
        "{name}\n{out}"
    );
    assert!(out.contains("counterexample (reads-from): P0 "), "{out}");
}

#[test]
fn llsc_build() {
    zoo("llsc", &["-mno-outline-atomics"], 1);
}

#[test]
fn lse_build() {
    zoo("lse", &["-march=armv8.1-a"], 1);
}

#[test]
fn outline_atomics_build_is_checked_with_and_without_lse() {
    zoo("outline", &["-moutline-atomics"], 2);
}

/// The records say what was checked: the kind as the scenario, the
/// object as new_ left it (the refcount's one reference, read from its
/// code, not assumed), and the property a PASS covers.
#[test]
fn records_say_which_client_ran_from_which_start() {
    let Some(so) = build("records", &["-mno-outline-atomics"]) else {
        return;
    };
    let (code, recs) = records(&so, &["--variant", "refcount,op-fetch-add,op-no-read"]);
    assert_eq!(code, Some(0), "{recs:?}");
    let r = rows(&recs, "refcount", "aarch64")[0];
    assert_eq!(r["scenario"], "refcount");
    assert_eq!(r["verdict"], "PASS", "{r}");
    assert!(
        reason(r).contains("exactly one put says last")
            && reason(r).contains("calloc, then obj = 1"),
        "{r}"
    );
    let r = rows(&recs, "op-fetch-add", "aarch64")[0];
    assert_eq!(r["scenario"], "op");
    assert!(
        reason(r).contains("2 threads x 1 op(s), then read() after joining them: always 2"),
        "{r}"
    );
    let r = rows(&recs, "op-no-read", "aarch64")[0];
    assert!(
        reason(r).contains("has no read(): no total is checked"),
        "{r}"
    );
}

/// A FAIL record carries the broken property in its note and the
/// counterexample in its detail, instruction by instruction; exit 1.
#[test]
fn a_relaxed_put_fails_with_its_counterexample() {
    let Some(so) = build("fail", &["-march=armv8.1-a"]) else {
        return;
    };
    let (code, recs) = records(&so, &["--variant", "refcount-relaxed-put"]);
    assert_eq!(code, Some(1), "{recs:?}");
    let r = rows(&recs, "refcount-relaxed-put", "aarch64")[0];
    assert_eq!(r["verdict"], "FAIL", "{r}");
    assert!(reason(r).starts_with("early \"last\""), "{r}");
    assert!(
        r["detail"]["counterexample"]
            .as_str()
            .is_some_and(|c| c.contains("<-rf-") && c.contains("use")),
        "{r}"
    );
    // The execution at the instruction level: the put's machine code and
    // the client's accesses named by what they stand for.
    let steps = r["detail"]["trace"].as_array().cloned().unwrap_or_default();
    let has = |f: &dyn Fn(&serde_json::Value) -> bool| steps.iter().any(f);
    assert!(
        has(&|s| s["place"]
            .as_str()
            .is_some_and(|p| p.starts_with("count_relaxed_put"))),
        "{r}"
    );
    assert!(
        has(&|s| s["instruction"].as_str().is_some_and(
            |i| i.starts_with("store use") && i.ends_with("(a holder's use of the object)")
        )),
        "{r}"
    );
    assert_eq!(r["detail"]["broken"].as_str(), Some(reason(r)), "{r}");
}

/// The relaxed ring's FAIL at the instruction level: the producer's
/// store to the slot picked by its masked index, the consumer's load of
/// the same slot reading the initial 0 though it read the new head with
/// acquire, and pop's store through its item pointer; exit 1. The correct
/// ring's PASS says what it covers.
#[test]
fn a_relaxed_ring_fails_with_its_counterexample() {
    let Some(so) = build("ring", &["-mno-outline-atomics"]) else {
        return;
    };
    let (code, recs) = records(&so, &["--variant", "ring-relaxed-head,ring"]);
    assert_eq!(code, Some(1), "{recs:?}");
    let r = rows(&recs, "ring", "aarch64")[0];
    assert_eq!(r["verdict"], "PASS", "{r}");
    assert_eq!(r["scenario"], "spsc", "{r}");
    assert!(
        reason(r).starts_with("FIFO: a producer pushing 1..3") && reason(r).contains("new_(2)"),
        "{r}"
    );
    let r = rows(&recs, "ring-relaxed-head", "aarch64")[0];
    assert_eq!(r["verdict"], "FAIL", "{r}");
    assert!(
        reason(r).starts_with("FIFO broken: the consumer popped ")
            && reason(r).contains("was never pushed"),
        "{r}"
    );
    assert_eq!(r["detail"]["broken"].as_str(), Some(reason(r)), "{r}");
    let steps = r["detail"]["trace"].as_array().cloned().unwrap_or_default();
    let step = |place: &str, instruction: &str| {
        steps.iter().find(|s| {
            s["place"].as_str().is_some_and(|p| p.starts_with(place))
                && s["instruction"]
                    .as_str()
                    .is_some_and(|i| i.contains(instruction))
        })
    };
    // The slot is one of the object's fields, chosen by the index.
    let slot_store = step("ring_relaxed_head_push", ", lsl #3]");
    let slot_load = step("ring_relaxed_head_pop", ", lsl #3]");
    assert!(slot_store.is_some() && slot_load.is_some(), "{r}");
    assert!(
        step("ring_relaxed_head_pop", "[x1]").is_some(),
        "pop's store through its item pointer: {r}"
    );
    assert!(
        step("client", "load item").is_some(),
        "the consumer's read of its item: {r}"
    );
    assert!(
        r["detail"]["counterexample"]
            .as_str()
            .is_some_and(|c| c.contains("<-rf-") && c.contains("queue+16")),
        "{r}"
    );
}

/// The ring as clang compiles it (verify_kinds.c's -DVERIFY_RING_ASM: the
/// slot's address computed into a register, then `str x1, [x9, #16]`):
/// the same verdicts as gcc's indexed form.
#[test]
fn a_slot_address_computed_into_a_register_is_followed() {
    let Some(so) = build("ring-asm", &["-DVERIFY_RING_ASM"]) else {
        return;
    };
    let (code, recs) = records(
        &so,
        &[
            "--variant",
            "ring-computed,ring-computed-relaxed-head",
            "--model",
            "aarch64,sc",
        ],
    );
    assert_eq!(code, Some(1), "{recs:?}");
    let verdict = |v: &str, m: &str| rows(&recs, v, m)[0]["verdict"].clone();
    assert_eq!(verdict("ring-computed", "aarch64"), "PASS", "{recs:?}");
    assert_eq!(verdict("ring-computed", "sc"), "PASS", "{recs:?}");
    assert_eq!(
        verdict("ring-computed-relaxed-head", "aarch64"),
        "FAIL",
        "{recs:?}"
    );
    assert_eq!(
        verdict("ring-computed-relaxed-head", "sc"),
        "PASS",
        "{recs:?}"
    );
    let r = rows(&recs, "ring-computed-relaxed-head", "aarch64")[0];
    assert!(
        reason(r).starts_with("FIFO broken: the consumer popped "),
        "{r}"
    );
    let steps = r["detail"]["trace"].as_array().cloned().unwrap_or_default();
    assert!(
        steps
            .iter()
            .any(|s| s["instruction"] == "str x1, [x9, #0x10]"),
        "{r}"
    );
}

/// A ring whose slot numbers live in the object, wrapped by a compare
/// (ring3-wrap): the index is loaded from memory, which verify cannot
/// bound, so the slot's access is refused, naming the instruction and
/// its address; never a PASS.
#[test]
fn a_ring_index_verify_cannot_bound_is_refused_by_instruction() {
    let Some(so) = build("ring3", &["-mno-outline-atomics", "-DVERIFY_RING3"]) else {
        return;
    };
    let (code, recs) = records(&so, &["--variant", "ring3-wrap", "--model", "aarch64,sc"]);
    assert_eq!(code, Some(0), "REFUSED is not a FAIL: {recs:?}");
    for m in ["aarch64", "sc"] {
        let r = rows(&recs, "ring3-wrap", m)[0];
        assert_eq!(r["verdict"], serde_json::Value::Null, "{r}");
        let why = r["parameters"]["refused"].as_str().unwrap_or("");
        assert!(
            why.contains("an index verify cannot bound") && why.contains("(ring3_push+0x"),
            "{r}"
        );
    }
}

/// `--advise` on the relaxed ring: the publish of head made release (the
/// correct ring's STLR), or a barrier before it, each verified again.
#[test]
fn advice_for_the_relaxed_ring_is_a_release_publish() {
    let Some(so) = build("ring-advise", &["-mno-outline-atomics"]) else {
        return;
    };
    let o = atomlab(&[
        "--no-save",
        "verify",
        "--plugin",
        so.to_str().unwrap(),
        "--variant",
        "ring-relaxed-head",
        "--model",
        "aarch64",
        "--advise",
    ]);
    let raw = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{raw}{}", stderr(&o));
    assert!(
        raw.lines()
            .any(|l| l.trim_start().starts_with("ring_relaxed_head_push+0x")
                && l.contains("str x2, [x0]")
                && l.contains("make it release (stlr)")),
        "{raw}"
    );
}

/// Three threads: the refcount's hand-over to two holders and the op's
/// join of two; the verdicts stay.
#[test]
fn three_threads() {
    let Some(so) = build("three", &["-march=armv8.1-a"]) else {
        return;
    };
    let (code, recs) = records(
        &so,
        &[
            "--threads",
            "3",
            "--variant",
            "refcount,refcount-relaxed-put,op-fetch-add,op-racy-add",
        ],
    );
    assert_eq!(code, Some(1), "{recs:?}");
    let verdict = |v: &str| rows(&recs, v, "aarch64")[0]["verdict"].clone();
    assert_eq!(verdict("refcount"), "PASS", "{recs:?}");
    assert_eq!(verdict("refcount-relaxed-put"), "FAIL", "{recs:?}");
    assert_eq!(verdict("op-fetch-add"), "PASS", "{recs:?}");
    assert_eq!(verdict("op-racy-add"), "FAIL", "{recs:?}");
    let r = rows(&recs, "op-racy-add", "aarch64")[0];
    assert!(reason(r).contains("instead of 3"), "{r}");
}

/// A new_ that leaves the object unknown is refused, saying why and what
/// to do: a malloc'ed count it never sets, a pointer into the allocation
/// returned instead of the allocation; one whose start is computed before
/// the allocation is followed.
#[test]
fn a_new_verify_cannot_read_is_refused_saying_why() {
    let Some(so) = build("bad-new", &["-mno-outline-atomics", "-DVERIFY_BAD_NEW"]) else {
        return;
    };
    let (code, recs) = records(
        &so,
        &["--variant", "op-malloc-uninit,op-from-arg,op-offset-new"],
    );
    assert_eq!(code, Some(1), "op-from-arg FAILs: {recs:?}");
    let r = rows(&recs, "op-malloc-uninit", "aarch64")[0];
    assert_eq!(r["verdict"], serde_json::Value::Null, "{r}");
    assert!(
        r["parameters"]["refused"]
            .as_str()
            .is_some_and(|w| w.contains("new_ leaves as malloc returns it (uninitialised)")),
        "{r}"
    );
    // A start computed before the allocation (by a helper function) is
    // followed now, as new_ is lifted whole: the state starts at 7, so
    // read() says more than the ops made, a FAIL that says so (not a lost
    // update).
    let r = rows(&recs, "op-from-arg", "aarch64")[0];
    assert_eq!(r["verdict"], "FAIL", "{r}");
    assert!(
        reason(r).contains("read() returned 9 instead of 2")
            && reason(r).contains("more than the ops made"),
        "{r}"
    );
    let r = rows(&recs, "op-offset-new", "aarch64")[0];
    assert!(
        r["parameters"]["refused"].as_str().is_some_and(
            |w| w.contains("returns something other than the memory its calloc call returned")
        ),
        "{r}"
    );
}

/// `--advise` on the refcount client: the put's store-exclusive made
/// release (the kernel's order) is offered as a fix, verified again; on
/// the correct refcount, nothing can be weakened.
#[test]
fn advice_for_the_relaxed_put_is_a_release() {
    let Some(so) = build("advise", &["-mno-outline-atomics"]) else {
        return;
    };
    let o = atomlab(&[
        "--no-save",
        "verify",
        "--plugin",
        so.to_str().unwrap(),
        "--variant",
        "refcount-relaxed-put,refcount",
        "--advise",
    ]);
    let raw = String::from_utf8_lossy(&o.stdout);
    let out = raw.replace("\n  ", " ");
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(
        out.contains("refcount-relaxed-put FAIL under aarch64: advice: each of these changes alone makes it PASS"),
        "{out}"
    );
    assert!(
        raw.lines()
            .any(|l| l.trim_start().starts_with("count_relaxed_put+0x")
                && l.contains("stxr")
                && l.contains("make it release (stlxr)")),
        "{out}"
    );
    assert!(
        out.contains("refcount PASS under aarch64: advice: nothing could be weakened"),
        "{out}"
    );
}

/// Every kind's records (PASS, FAIL with its execution, REFUSED) are the
/// document every subcommand writes: checked against
/// schema/atomlab.schema.json.
#[test]
fn the_json_document_matches_the_schema() {
    let Some(so) = build("schema", &["-moutline-atomics"]) else {
        return;
    };
    let o = atomlab(&[
        "--no-save",
        "--json",
        "verify",
        "--plugin",
        so.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let schema: serde_json::Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../schema/atomlab.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let url = "https://atomlab.invalid/schema/atomlab.schema.json";
    compiler.add_resource(url, schema).unwrap();
    let index = compiler.compile(url, &mut schemas).unwrap();
    if let Err(e) = schemas.validate(&doc, index) {
        panic!("verify --json does not match the schema:\n{e:#}");
    }
    let scenarios: std::collections::BTreeSet<&str> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["scenario"].as_str())
        .collect();
    assert_eq!(
        scenarios,
        ["op", "refcount", "spsc"].into_iter().collect(),
        "{doc}"
    );
}

/// The refcount and op clients on riscv64 and x86-64 builds, each from
/// the object its own `new_` leaves (the refcount's one reference read
/// from riscv64 or x86-64 code): the kernel-ordered refcount and the
/// fetch_add op PASS; the relaxed put FAILs under riscv (RVWMO lets the
/// use drift past the put) and PASSes under x86tso, as the hardware runs
/// it; the racy op FAILs everywhere.
#[test]
fn refcount_and_op_on_riscv64_and_x86_64() {
    for (cc, model) in [(RISCV, "riscv"), (HOST, "x86tso")] {
        let Some(so) = build_plugin(
            cc,
            "verify_kinds.c",
            "plugins-verify-kinds",
            &format!("kinds-{model}"),
            &["-O2"],
        ) else {
            continue;
        };
        let (code, recs) = records(
            &so,
            &[
                "--variant",
                "refcount,refcount-relaxed-put,op-fetch-add,op-racy-add",
                "--model",
                &format!("{model},sc"),
            ],
        );
        assert_eq!(code, Some(1), "{model}: the racy op FAILs: {recs:?}");
        for m in [model, "sc"] {
            let r = rows(&recs, "refcount", m)[0];
            assert_eq!(r["verdict"], "PASS", "{r}");
            assert!(reason(r).contains("calloc, then obj = 1"), "{r}");
            assert_eq!(rows(&recs, "op-fetch-add", m)[0]["verdict"], "PASS");
            assert_eq!(rows(&recs, "op-racy-add", m)[0]["verdict"], "FAIL");
        }
        let relaxed = rows(&recs, "refcount-relaxed-put", model)[0];
        let want = if model == "riscv" { "FAIL" } else { "PASS" };
        assert_eq!(relaxed["verdict"], want, "{relaxed}");
        assert_eq!(
            rows(&recs, "refcount-relaxed-put", "sc")[0]["verdict"],
            "PASS"
        );
    }
}
