//! Debian packages built byte by byte, for tests that need what no
//! archiver writes: member names with control characters, `..` paths,
//! headers that claim more than they hold. The layouts are deb(5)'s `ar`
//! archive (ar(5)'s common format) and tar(5)'s ustar headers, with GNU
//! long names (`L`) and pax headers (`x`).
#![allow(dead_code)]

/// One tar header block (ustar) for `name` (its first 100 bytes; longer
/// ones need [`long_name`] before it), of type `kind`, declaring `size`
/// bytes (octal when it fits 11 digits, else GNU base-256).
pub fn tar_header(name: &[u8], size: u64, kind: u8) -> [u8; 512] {
    let mut h = [0u8; 512];
    let n = name.len().min(100);
    h[..n].copy_from_slice(&name[..n]);
    h[100..108].copy_from_slice(b"0000755\0");
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    if size < 8u64.pow(11) {
        h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    } else {
        h[124] = 0x80;
        h[128..136].copy_from_slice(&size.to_be_bytes());
    }
    h[136..148].copy_from_slice(b"00000000000\0");
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

/// Appends a regular file `name` holding `data` to tar archive `out`.
pub fn tar_file(out: &mut Vec<u8>, name: &[u8], data: &[u8]) {
    out.extend_from_slice(&tar_header(name, data.len() as u64, b'0'));
    out.extend_from_slice(data);
    pad(out, 512);
}

/// Appends a GNU long name entry (`L`) naming the entry after it.
pub fn long_name(out: &mut Vec<u8>, name: &[u8]) {
    let mut data = name.to_vec();
    data.push(0);
    out.extend_from_slice(&tar_header(b"././@LongLink", data.len() as u64, b'L'));
    out.extend_from_slice(&data);
    pad(out, 512);
}

/// Appends a pax extended header (`x`) with a `path` record.
pub fn pax_path(out: &mut Vec<u8>, path: &[u8]) {
    // "LEN path=VALUE\n", LEN counting itself.
    let body_len = " path=\n".len() + path.len();
    let mut len = body_len + 1;
    while len.to_string().len() + body_len != len {
        len += 1;
    }
    let mut rec = format!("{len} path=").into_bytes();
    rec.extend_from_slice(path);
    rec.push(b'\n');
    out.extend_from_slice(&tar_header(b"PaxHeader", rec.len() as u64, b'x'));
    out.extend_from_slice(&rec);
    pad(out, 512);
}

/// Ends tar archive `out` (two zero blocks).
pub fn tar_end(out: &mut Vec<u8>) {
    out.extend_from_slice(&[0u8; 1024]);
}

fn pad(out: &mut Vec<u8>, to: usize) {
    while !out.len().is_multiple_of(to) {
        out.push(0);
    }
}

/// An `ar` archive of `members` (name, bytes), as deb(5) lays it out.
pub fn ar(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    for (name, data) in members {
        let header = format!(
            "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
            name,
            0,
            0,
            0,
            100644,
            data.len()
        );
        assert_eq!(header.len(), 60, "ar member name {name:?} too long");
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    out
}

/// A control archive (plain tar) whose control file names package `name`.
pub fn control_tar(name: &str) -> Vec<u8> {
    let mut tar = Vec::new();
    let control = format!("Package: {name}\nVersion: 1.0\nArchitecture: amd64\n");
    tar_file(&mut tar, b"./control", control.as_bytes());
    tar_end(&mut tar);
    tar
}

/// A package named `name` whose data archive is the plain tar `data_tar`
/// (`data.tar`, which dpkg also reads).
pub fn deb(name: &str, data_tar: &[u8]) -> Vec<u8> {
    let control = control_tar(name);
    ar(&[
        ("debian-binary", b"2.0\n"),
        ("control.tar", &control),
        ("data.tar", data_tar),
    ])
}
