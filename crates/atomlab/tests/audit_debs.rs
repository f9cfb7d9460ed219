//! `atomlab audit` on real Debian arm64 packages, read straight from the
//! `.deb` files that .ci/run fetches with `apt-get download PKG:arm64` into
//! $ATOMLAB_AUDIT_DEBS. Without that variable the test says it skipped
//! (and fails instead under ATOMLAB_REQUIRE_CROSS=1, as in CI).

mod audit_support;
mod cli_support;

use std::io::Write;
use std::path::PathBuf;

use audit_support::*;

fn debs() -> Option<Vec<PathBuf>> {
    let Ok(dir) = std::env::var("ATOMLAB_AUDIT_DEBS") else {
        let msg = "audit_debs: skipped: ATOMLAB_AUDIT_DEBS is not set (.ci/run downloads arm64 packages there)";
        assert!(
            !require_cross(),
            "{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set"
        );
        let _ = writeln!(std::io::stderr(), "{msg}");
        return None;
    };
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    v.sort();
    Some(v)
}

fn find<'a>(doc: &'a serde_json::Value, suffix: &str) -> &'a serde_json::Value {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["detail"])
        .find(|b| b["path"].as_str().unwrap().ends_with(suffix))
        .unwrap_or_else(|| panic!("no {suffix} in the packages"))
}

#[test]
fn debian_arm64_packages_get_the_right_verdicts() {
    let Some(debs) = debs() else { return };
    for pkg in ["libc6_", "nginx_", "libatomic1_", "libstdc++6_", "libssl3_"] {
        assert!(
            debs.iter()
                .any(|d| d.file_name().unwrap().to_string_lossy().starts_with(pkg)),
            "{pkg}*.deb missing from {debs:?}"
        );
    }
    let out = atomlab()
        .args(["audit", "--json", "--by-function=5"])
        .args(&debs)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["errors"].as_array().unwrap().is_empty(),
        "{}",
        doc["errors"]
    );

    // Debian builds with GCC's default -moutline-atomics, so these programs
    // and libraries call libgcc's helpers; the binaries are stripped, so the
    // helpers are found by their shape.
    for (suffix, helper) in [
        ("/usr/sbin/nginx", "__aarch64_ldadd8_sync"),
        ("/libc.so.6", "__aarch64_cas4_acq"),
        ("/libstdc++.so.6.0.30", "__aarch64_ldadd4_acq_rel"),
        ("/libssl.so.3", ""),
    ] {
        let b = find(&doc, suffix);
        assert_eq!(
            b["verdict"]["kind"], "outline_atomics",
            "{suffix}: {}",
            b["verdict"]
        );
        assert_eq!(b["has_symtab"], false, "{suffix}");
        assert!(class(&b["by_class"], "outline_call") > 0, "{suffix}");
        assert_eq!(class(&b["by_class"], "lse"), 0, "{suffix}");
        assert_eq!(class(&b["by_class"], "llsc_loop"), 0, "{suffix}");
        for h in b["helpers"].as_array().unwrap() {
            assert_eq!(h["found_by"], "shape", "{suffix}");
        }
        if !helper.is_empty() {
            assert!(
                b["outline_calls"][helper].as_u64() > Some(0),
                "{suffix}: {}",
                b["outline_calls"]
            );
        }
        // By-function works on the stripped file: named from .dynsym or
        // placed by .eh_frame.
        assert!(!b["functions"].as_array().unwrap().is_empty(), "{suffix}");
    }
    // libcrypto's precomputed tables live in .text: objdump decodes them as
    // LSE and exclusives; the audit keeps them out of the verdict.
    let crypto = find(&doc, "/libcrypto.so.3");
    assert_eq!(
        crypto["verdict"]["kind"], "outline_atomics",
        "{}",
        crypto["verdict"]
    );
    assert!(class(&crypto["outside_functions"], "lse") > 0);
    // Debian 12's libatomic has ifuncs, but its resolvers all return the
    // default implementations (which call the outline helpers): its inline
    // LSE variants are reached from nowhere, so no ARMv8.0 CPU runs them.
    // The verdict says so and names the evidence; it must not say SIGILL.
    // Its 16-byte operations are LL/SC loops on every CPU.
    let atomic = find(&doc, "/libatomic.so.1.2.0");
    let words = atomic["verdict"]["words"].as_str().unwrap();
    assert_eq!(atomic["verdict"]["kind"], "mixed", "{words}");
    assert!(!words.contains("SIGILL"), "{words}");
    let lse = class(&atomic["by_class"], "lse");
    assert!(lse > 0);
    let d = &atomic["lse_dispatch"];
    assert_eq!(d["unconditional"], 0, "{d}");
    assert_eq!(d["chosen_at_run_time"].as_u64(), Some(lse), "{d}");
    assert_eq!(d["evidence"]["unreferenced"].as_u64(), Some(lse), "{d}");
    assert!(words.contains("[unreferenced]"), "{words}");
    assert!(class(&atomic["by_class"], "llsc_loop") > 0);
    let notes = atomic["notes"].to_string();
    assert!(notes.contains("GNU ifuncs"), "{notes}");
    // No binary in these packages has LSE behind no CPU-feature test.
    for r in doc["records"].as_array().unwrap() {
        let b = &r["detail"];
        assert!(
            !b["verdict"]["words"].as_str().unwrap().contains("SIGILL"),
            "{}: {}",
            b["path"],
            b["verdict"]
        );
    }
    // One record per package (issue 27): its worst file's verdict, its ELF
    // file count and the file that decided it.
    for (pkg, verdict, decided) in [
        ("libatomic1", "mixed", "/libatomic.so.1.2.0"),
        ("libc6", "run_time_lse", "/lib/aarch64-linux-gnu/"),
        ("libssl3", "run_time_lse", ".so.3"),
        ("libstdc++6", "run_time_lse", "/libstdc++.so.6.0.30"),
        ("nginx", "run_time_lse", "/usr/sbin/nginx"),
    ] {
        let r = doc["records"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["variant"] == "package" && r["scenario"] == pkg)
            .unwrap_or_else(|| panic!("no package record for {pkg}"));
        assert_eq!(r["parameters"]["observation"], verdict, "{pkg}: {r}");
        let files = r["detail"]["elf_files"].as_u64().unwrap();
        let per_file = doc["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                f["variant"] != "package"
                    && f["parameters"]["path"].as_str().is_some_and(|p| {
                        p.starts_with(&format!("{}!", r["parameters"]["path"].as_str().unwrap()))
                    })
            })
            .count() as u64;
        assert_eq!(files, per_file, "{pkg}");
        assert!(files >= 1, "{pkg}");
        let d = r["detail"]["deciding_file"].as_str().unwrap();
        assert!(
            d.contains(&format!("!{decided}")) || d.ends_with(decided),
            "{pkg}: decided by {d}"
        );
    }
    // The people's view: a row per package, libatomic1 (mixed) first, and
    // nothing needing attention.
    let out = atomlab().arg("audit").args(&debs).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with(['|', '│']) && l.contains("ARMv8.0-safe"))
        .collect();
    assert_eq!(rows.len(), 5, "{table}");
    assert!(rows[0].contains("libatomic1"), "{table}");
    assert!(!table.contains(".deb!"), "{table}");
    assert!(table.contains("needs attention: none"), "{table}");

    // --require no-llsc fails on libatomic alone.
    let out = atomlab()
        .args(["audit", "--require", "no-llsc"])
        .args(
            debs.iter()
                .filter(|d| d.to_string_lossy().contains("libatomic1_")),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // The gate says which file failed and why (it said "1 of 11 binaries
    // do not meet" and named none, over a table ending "needs attention:
    // none").
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("do not meet --require no-llsc:"), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("  ") && l.contains("libatomic1_") && l.contains(".deb!")),
        "{err}"
    );
}
