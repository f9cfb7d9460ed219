//! For the encoders' tests: what GNU as makes of a listing, and the words
//! an encoder emits, so that each encoder compares its instructions with
//! the assembler's (binutils' cross assemblers, `aarch64-linux-gnu-as`,
//! `riscv64-linux-gnu-as`). Without the cross binutils the comparison is
//! skipped with a message, and under `ATOMLAB_REQUIRE_CROSS=1` (as CI sets)
//! it fails instead.

use crate::buffer::{Buffer, Fixup, Label};

/// The 32-bit words `f` emits into an empty buffer, branches resolved.
pub(crate) fn words<F: Fixup<Unit = u32>>(f: impl FnOnce(&mut Buffer<F>)) -> Vec<u32> {
    let mut a = Buffer::new();
    f(&mut a);
    let bytes = a.finish().expect("labels bound");
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Branches over a label bound before them and one bound after:
/// `top: b0 end; b1 end; b2 top; end: b3 top`, each `bN(asm, target)`
/// one branch instruction (offsets +3, +2, -2 and -3 instructions).
pub(crate) fn forward_and_backward<F: Fixup>(
    b: [fn(&mut Buffer<F>, Label); 4],
) -> impl FnOnce(&mut Buffer<F>) {
    move |a| {
        let top = a.label();
        let end = a.label();
        a.bind(top);
        b[0](a, end);
        b[1](a, end);
        b[2](a, top);
        a.bind(end);
        b[3](a, top);
    }
}

/// Compares each line's expected word (`want`) and our encoder's
/// (`ours`, one word) with what GNU as makes of its text (`{prefix}-as`
/// with `args`; skipped or failed as [`assemble`] says without it).
pub(crate) fn compare(prefix: &str, args: &[&str], package: &str, lines: &[(&str, u32, Vec<u32>)]) {
    let text: Vec<&str> = lines.iter().map(|(t, _, _)| *t).collect();
    let Some(words) = assemble(prefix, args, &text, package) else {
        return;
    };
    assert_eq!(words.len(), lines.len());
    for ((text, want, ours), w) in lines.iter().zip(words) {
        assert_eq!(w, *want, "{text}: as gives {w:#010x}");
        assert_eq!(*ours, vec![w], "{text}");
    }
}

/// The words of `.text` when `{prefix}-as` assembles `lines` with `args`;
/// `None` (said on stderr) when the cross binutils (Debian's `package`)
/// are not installed.
pub(crate) fn assemble(
    prefix: &str,
    args: &[&str],
    lines: &[&str],
    package: &str,
) -> Option<Vec<u32>> {
    let dir = std::env::temp_dir().join(format!("atomlab-{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (src, obj, bin) = (dir.join("l.s"), dir.join("l.o"), dir.join("l.bin"));
    let text: String = lines.iter().map(|t| format!("{t}\n")).collect();
    std::fs::write(&src, text).expect("temp file");
    let as_run = std::process::Command::new(format!("{prefix}-as"))
        .args(args)
        .arg("-o")
        .arg(&obj)
        .arg(&src)
        .output();
    let Ok(out) = as_run else {
        let msg = format!("{prefix}-as is not installed ({package})");
        if std::env::var("ATOMLAB_REQUIRE_CROSS").is_ok_and(|v| v == "1") {
            panic!("{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set");
        }
        eprintln!("skipped: {msg}");
        return None;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = std::process::Command::new(format!("{prefix}-objcopy"))
        .args(["-O", "binary", "--only-section=.text"])
        .arg(&obj)
        .arg(&bin)
        .output()
        .expect("objcopy comes with as");
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let bytes = std::fs::read(&bin).expect("objcopy output");
    let _ = std::fs::remove_dir_all(&dir);
    Some(
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}
