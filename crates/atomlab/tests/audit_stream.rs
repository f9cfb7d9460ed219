//! `atomlab audit` on a package with a huge member (issue 22): streamed,
//! never held in memory. In a test binary of its own: a child's peak
//! memory (ru_maxrss) starts from its parent's resident size at fork, and
//! other audit tests hold several copies of atomlab's 60-130 MB binary.

mod audit_support;
mod cli_support;

use audit_support::*;

/// Issue 22: a 14 MB .deb holding a 3 GB member took 7.4 GB of memory
/// before saying "holds no ELF file": the data archive was decompressed
/// into memory whole. It is now streamed and members that are not ELF are
/// never held, so the peak stays far below the member's size. Here: a
/// 256 MiB member of zeros beside one ELF file, gzip and xz (the old code
/// peaked at 1.7 GB with 512 MiB beside atomlab itself; this one at 8-9 MB
/// beside /bin/true).
#[test]
// The child is reaped by wait4 (wait_with_peak_memory), which std's
// Child::wait cannot do while reporting the peak memory.
#[allow(clippy::zombie_processes)]
fn a_package_with_a_huge_member_is_streamed() {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: decompressing 256 MiB under emulation takes minutes; the x86-64 run covers the code");
        return;
    }
    let dir = scratch("huge-member");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("usr/bin")).unwrap();
    // A small ELF, so that the peak measures the streaming, not the size
    // of the binary audited (atomlab's own is 60-130 MB by build).
    std::fs::copy("/bin/true", root.join("usr/bin/true")).expect("/bin/true");
    let zeros = std::fs::File::create(root.join("usr/big.bin")).unwrap();
    zeros.set_len(256 << 20).unwrap();
    let sh = |script: &str| {
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    sh("printf '2.0\\n' > debian-binary && tar -C root -cf control.tar . && gzip -1 -f control.tar && tar -C root -cf data.tar .");
    for (comp, cmd) in [
        ("gz", "gzip -1 -c data.tar > data.tar.gz"),
        ("xz", "xz -0 -T2 -c data.tar > data.tar.xz"),
    ] {
        sh(cmd);
        let deb = format!("big-{comp}.deb");
        sh(&format!(
            "rm -f {deb} && ar rc {deb} debian-binary control.tar.gz data.tar.{comp}"
        ));
        // --by-file: the package holds an x86-64 ELF, which the row per
        // package (about aarch64) refuses as another architecture's.
        let child = atomlab()
            .args(["audit", "--no-save", "--by-file"])
            .arg(dir.join(&deb))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (code, peak_kib) = wait_with_peak_memory(child.id() as i32);
        eprintln!("{deb}: peak {} MiB", peak_kib / 1024);
        assert_eq!(code, 0, "{deb}: audit failed");
        assert!(
            peak_kib < 128 * 1024,
            "{deb}: peak memory {} MiB while auditing one ELF beside a 256 MiB member",
            peak_kib / 1024
        );
    }
}

/// Waits for child `pid`: its exit code and its peak resident memory (KiB).
fn wait_with_peak_memory(pid: i32) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: rusage is plain data, zero is a valid value; wait4 writes it
    // and the status for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is a child this process spawned and has not waited for.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, usage.ru_maxrss)
}
