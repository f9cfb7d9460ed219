//! Records what built this binary (rustc version, target features) so that the
//! `Machine` fingerprint can say it: an LSE instruction inlined by
//! `-C target-feature=+lse` and an outline helper are different programs.
use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc)
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=ATOMLAB_RUSTC_VERSION={version}");
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    println!("cargo:rustc-env=ATOMLAB_TARGET_FEATURES={features}");
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=ATOMLAB_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}
