//! Turning the command line's paths into ELF images: plain files,
//! directories and Debian packages, handed to the audit one at a time.
//!
//! Directories are walked recursively in name order. A symbolic link to a
//! regular file is followed, unless that file is listed under its own name
//! too (`libfoo.so` → `libfoo.so.1.2`: audited once); a link to a
//! directory, or to nothing, is passed over and named in
//! [`Expanded::skipped_links`], so that nothing is counted twice and
//! nothing is skipped without a word.
//!
//! A package is read as deb(5) lays it out: an `ar` archive in the common
//! format of ar(5) (deb(5): "no long file name extensions", names of at
//! most 16 bytes with an optional trailing slash, data padded to an even
//! offset) whose `control.tar.*` member holds the control file
//! (deb-control(5)) and whose `data.tar.*` member holds the installed
//! files: a tar archive (POSIX.1-2001 ustar and pax, GNU long names:
//! tar(5)) compressed with xz (the .xz file format 1.0.4), zstd (RFC 8878),
//! gzip (RFC 1952) or nothing.
//!
//! Memory is bounded per package (issue 33): the `.deb` is read from its
//! file as a stream, never whole; an ELF member is read into one buffer
//! that grows as its bytes arrive (never from the size its tar header
//! claims), handed to the audit and dropped before the next member is
//! read; a member larger than [`MAX_ELF_BYTES`] is refused by name; a
//! member that is not ELF is never held, nor a long name or pax header
//! beyond [`MAX_TAR_EXTENSION`]. The decompressors hold at most their
//! window: [`MAX_XZ_DICT_MIB`] for xz, [`MAX_ZSTD_WINDOW_MIB`] for zstd
//! (twice that once ruzstd rounds its ring buffer up), 32 KiB for gzip;
//! a larger window is refused before it is allocated.
//!
//! Names read from files (member paths, `ar` member names, control fields,
//! the names of files in walked directories) are made visible with
//! `atomlab_core::text::shown` where they are read, so that the terminal,
//! the JSON, the store and the HTML report all get the same escaped form.
//! A member's path is otherwise kept as the archive gives it (`./usr/bin/x`
//! shown as the installed `/usr/bin/x`, `../../etc/x` unchanged), and
//! nothing read from a package is ever written to disk.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use atomlab_core::text::shown;

use crate::error::AuditError;

/// One ELF file to audit: where it came from and its bytes.
pub struct ElfInput {
    /// Display path (`pkg.deb!/usr/bin/x` for package members).
    pub path: String,
    /// The whole file.
    pub data: Vec<u8>,
}

/// A symbolic link a directory walk passed over, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLink {
    /// The link, as shown.
    pub path: String,
    /// Why it was not followed.
    pub why: &'static str,
}

/// What a path expanded to.
#[derive(Default)]
pub struct Expanded {
    /// ELF files (and files given by name, ELF or not: those get a clear
    /// error), when collected by [`expand`] or [`unpack_deb`]; an audit
    /// takes them one at a time from [`expand_each`] instead.
    pub inputs: Vec<ElfInput>,
    /// Paths that could not be read or unpacked.
    pub errors: Vec<AuditError>,
    /// Non-ELF files passed over inside directories and packages.
    pub skipped_non_elf: u64,
    /// Symbolic links passed over inside directories.
    pub skipped_links: Vec<SkippedLink>,
    /// Each package's control fields (its path as shown, then the fields),
    /// for the packages whose control member could be read.
    pub controls: Vec<(String, DebControl)>,
}

/// What a binary package says of itself in its control file
/// (deb-control(5)): the fields atomlab uses, control characters made
/// visible.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DebControl {
    /// `Package:`, the name (`libstdc++6`).
    pub package: String,
    /// `Version:` (`12.2.0-14+deb12u1`).
    pub version: Option<String>,
    /// `Architecture:` (`arm64`, `all`).
    pub architecture: Option<String>,
}

/// The longest control field value kept (Debian's package names and
/// versions are far shorter; a longer one is cut, saying so).
const MAX_FIELD_CHARS: usize = 256;

impl DebControl {
    /// The fields of a control file's first paragraph (field names are
    /// case-insensitive and continuation lines start with a space or a
    /// tab, as deb822(5) says); `None` without a `Package:` field.
    pub fn parse(text: &str) -> Option<DebControl> {
        let (mut package, mut version, mut architecture) = (None, None, None);
        for line in text.lines() {
            if line.trim().is_empty() {
                break;
            }
            if line.starts_with([' ', '\t']) {
                continue;
            }
            let Some((field, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            let value = (!value.is_empty()).then(|| shown(value, MAX_FIELD_CHARS));
            match field.trim().to_ascii_lowercase().as_str() {
                "package" => package = value,
                "version" => version = value,
                "architecture" => architecture = value,
                _ => {}
            }
        }
        Some(DebControl {
            package: package?,
            version,
            architecture,
        })
    }
}

const ELF_MAGIC: &[u8] = b"\x7fELF";
const AR_MAGIC: &[u8] = b"!<arch>\n";

/// The largest ELF file audited (2 GiB), and so the most one package
/// member or file holds in memory: a package member or a file given by
/// name beyond it is refused by name with the limit, not read.
pub const MAX_ELF_BYTES: u64 = 2 << 30;

/// The largest dictionary an xz data archive may ask for (xz -9 uses
/// 64 MiB): a larger one is refused before it is allocated.
pub const MAX_XZ_DICT_MIB: u32 = 256;

/// The largest window a zstd data archive may ask for (zstd's own
/// decoder refuses more by default; ruzstd reserves it at once, and its
/// ring buffer rounds it up to the next power of two).
pub const MAX_ZSTD_WINDOW_MIB: u64 = 128;

/// The most a tar archive's GNU long name or pax extended header may hold
/// (a path is at most 4 KiB on Linux): a longer one is refused by name,
/// not read into memory.
pub const MAX_TAR_EXTENSION: u64 = 64 << 10;

/// The longest member path or symbol name kept; a longer one is cut,
/// saying how much was left out.
pub const MAX_NAME_CHARS: usize = 4096;

/// What is done with each ELF file as it is read (its display path and
/// bytes): the audit, before the next file is read.
pub type EachElf<'a> = dyn FnMut(&str, &[u8]) + 'a;

/// `path` as shown: control characters in it made visible (a file name
/// in a walked directory is read from the file system, not typed).
pub fn path_shown(path: &Path) -> String {
    shown(&path.display().to_string(), MAX_NAME_CHARS)
}

/// An error another crate (a decompressor, the tar reader) made, as
/// shown: its text may quote bytes of the archive (the tar crate quotes a
/// corrupt header's name).
fn said(e: impl std::fmt::Display) -> String {
    shown(&e.to_string(), 512)
}

fn io_err(path: &Path, source: std::io::Error) -> AuditError {
    AuditError::Io {
        path: path_shown(path),
        source,
    }
}

/// Expands `path` into ELF inputs, all collected in `out.inputs` (for a
/// caller that wants them at once; an audit uses [`expand_each`], which
/// holds one file at a time).
pub fn expand(path: &Path, out: &mut Expanded) {
    let mut inputs = Vec::new();
    expand_each(path, out, &mut |path, data| {
        inputs.push(ElfInput {
            path: path.to_string(),
            data: data.to_vec(),
        })
    });
    out.inputs.append(&mut inputs);
}

/// Reads `path` and calls `each` with every ELF file in it, one at a time:
/// the file itself when given by name (ELF or not: a file that is not
/// gets its error from the audit), each ELF file under a directory, each
/// ELF member of a package. The bytes `each` is given are reused for the
/// next file once it returns.
pub fn expand_each(path: &Path, out: &mut Expanded, each: &mut EachElf<'_>) {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            out.errors.push(io_err(path, e));
            return;
        }
    };
    let mut buf = Vec::new();
    if !meta.is_dir() {
        read_unit(path, Given::ByName, &mut buf, out, each);
        return;
    }
    let mut units = Vec::new();
    list_dir(path, &mut units, out);
    let mut found = 0usize;
    for unit in units {
        read_unit(&unit, Given::Listed, &mut buf, out, &mut |p, d| {
            found += 1;
            each(p, d)
        });
    }
    if found == 0 {
        out.errors.push(AuditError::NoElfInDirectory {
            path: path_shown(path),
        });
    }
}

/// How a unit was named: on the command line, or found by [`list_dir`]
/// (which keeps `ar` files only when named `.deb`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Given {
    ByName,
    Listed,
}

/// Reads one unit [`list_dir`] found (an ELF file, or a `.deb` streamed
/// member by member), calling `each` for its ELF files; `buf` is a
/// worker's buffer kept from file to file (a fresh allocation of megabytes
/// per file cost page faults and `malloc` about a tenth of an archive's
/// audit).
pub(crate) fn read_listed_each(
    path: &Path,
    buf: &mut Vec<u8>,
    out: &mut Expanded,
    each: &mut EachElf<'_>,
) {
    read_unit(path, Given::Listed, buf, out, each)
}

/// Reads one file: a package streamed from it, or the file into `buf`
/// and given to `each`. Given by name, an `ar` archive is a package only
/// when its first member is `debian-binary` (deb(5)); anything else is
/// given to `each` to be refused as not ELF, from its first bytes only.
fn read_unit(
    path: &Path,
    given: Given,
    buf: &mut Vec<u8>,
    out: &mut Expanded,
    each: &mut EachElf<'_>,
) {
    let shown_path = path_shown(path);
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return out.errors.push(io_err(path, e)),
    };
    buf.clear();
    if let Err(e) = (&mut file).take(8).read_to_end(buf) {
        return out.errors.push(io_err(path, e));
    }
    if buf.starts_with(AR_MAGIC) && (given == Given::Listed || is_deb(path)) {
        let mut stream = std::io::BufReader::with_capacity(64 << 10, buf.as_slice().chain(file));
        return read_deb(&shown_path, &mut stream, out, each);
    }
    if !buf.starts_with(ELF_MAGIC) {
        // Refused by its first bytes: no need to read the rest.
        return each(&shown_path, buf);
    }
    let len = file.metadata().map_or(0, |m| m.len());
    if len > MAX_ELF_BYTES {
        return out.errors.push(too_large(path, len));
    }
    // The file system's size of a file that exists, within the limit
    // above: reserved at once rather than grown by doubling.
    buf.reserve(usize::try_from(len).unwrap_or(0).saturating_sub(buf.len()));
    match file.take(MAX_ELF_BYTES).read_to_end(buf) {
        Ok(_) => each(&shown_path, buf),
        Err(e) => out.errors.push(io_err(path, e)),
    }
}

/// Whether the `ar` archive at `path` is a Debian package: its first
/// member is `debian-binary`, as deb(5) requires.
fn is_deb(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut ar = ArReader::new(std::io::BufReader::new(file));
    ar.magic().is_ok() && matches!(ar.next_member(), Ok(Some(m)) if m.name == "debian-binary")
}

/// A file past [`MAX_ELF_BYTES`], refused before it is read.
fn too_large(path: &Path, len: u64) -> AuditError {
    io_err(
        path,
        std::io::Error::other(format!(
            "{} MiB, larger than the {} MiB atomlab reads of one ELF file; not audited",
            len >> 20,
            MAX_ELF_BYTES >> 20
        )),
    )
}

/// The `ar` archive of deb(5), read as a stream: the magic, then each
/// member's 60-byte header (name, date, owner, group, mode, a decimal
/// size, the two bytes "`\n") followed by its data, padded to an even
/// offset with a newline. Between [`ArReader::next_member`] calls the
/// reader reads the current member's data (never past it).
struct ArReader<R> {
    inner: R,
    /// Bytes of the current member's data not read yet.
    left: u64,
    /// Its padding byte, if any.
    pad: u64,
    /// Its size.
    size: u64,
    /// The current member's name (for errors about what follows it).
    last: Option<String>,
}

/// One member of an `ar` archive: its name as shown and its size.
struct ArMember {
    name: String,
    size: u64,
}

impl<R: Read> ArReader<R> {
    fn new(inner: R) -> ArReader<R> {
        ArReader {
            inner,
            left: 0,
            pad: 0,
            size: 0,
            last: None,
        }
    }

    /// Reads the archive's magic.
    fn magic(&mut self) -> Result<(), String> {
        let mut magic = Vec::with_capacity(8);
        (&mut self.inner)
            .take(8)
            .read_to_end(&mut magic)
            .map_err(|e| format!("cannot read: {}", said(e)))?;
        if magic != AR_MAGIC {
            return Err("not an ar archive (it does not start with \"!<arch>\\n\")".into());
        }
        Ok(())
    }

    /// Where the reader is, for errors: after a member, or at the start.
    fn place(&self) -> String {
        match &self.last {
            Some(name) => format!("after member {name}"),
            None => "at its first member".into(),
        }
    }

    /// Passes over the rest of the current member and reads the next
    /// one's header; `None` at the end of the archive.
    fn next_member(&mut self) -> Result<Option<ArMember>, String> {
        let rest = self.left + self.pad;
        let skipped = std::io::copy(&mut (&mut self.inner).take(rest), &mut std::io::sink())
            .map_err(|e| format!("cannot read {}: {}", self.place(), said(e)))?;
        // (A missing padding byte at the very end is no harm.)
        if skipped < self.left {
            let name = self.last.clone().unwrap_or_default();
            return Err(format!(
                "member {name} is cut short: its header says {} bytes, the archive ends after {}",
                self.size,
                self.size - self.left + skipped
            ));
        }
        self.left = 0;
        self.pad = 0;
        let mut header = Vec::with_capacity(60);
        (&mut self.inner)
            .take(60)
            .read_to_end(&mut header)
            .map_err(|e| format!("cannot read {}: {}", self.place(), said(e)))?;
        match header.len() {
            0 => return Ok(None),
            // A newline left over by an archiver that pads the last member.
            1 if header == b"\n" => return Ok(None),
            60 => {}
            n => {
                return Err(format!(
                    "a member header {} is cut short ({n} of its 60 bytes)",
                    self.place()
                ))
            }
        }
        let name = String::from_utf8_lossy(&header[..16]);
        let name = shown(name.trim_end_matches(' ').trim_end_matches('/'), 64);
        if &header[58..60] != b"`\n" {
            return Err(format!(
                "member header {name:?} {} does not end with \"`\\n\": not an ar member",
                self.place()
            ));
        }
        let size_field = String::from_utf8_lossy(&header[48..58]);
        let size: u64 = size_field.trim_end_matches(' ').parse().map_err(|_| {
            format!(
                "member {name}: its size field {:?} is not a decimal number",
                shown(&size_field, 16)
            )
        })?;
        self.left = size;
        self.pad = size & 1;
        self.size = size;
        self.last = Some(name.clone());
        Ok(Some(ArMember { name, size }))
    }
}

impl<R: Read> Read for ArReader<R> {
    /// Reads the current member's data, and nothing after it.
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let room = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = self.inner.read(&mut buf[..room])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Unpacks a `.deb` held in memory and adds every ELF file of its data
/// archive to `out.inputs` (for callers that want them at once: the fuzz
/// tests; an audit reads packages with [`read_deb`]).
pub fn unpack_deb(path: &str, data: &[u8], out: &mut Expanded) {
    let mut inputs = Vec::new();
    read_deb(path, &mut { data }, out, &mut |path, data| {
        inputs.push(ElfInput {
            path: path.to_string(),
            data: data.to_vec(),
        })
    });
    out.inputs.append(&mut inputs);
}

/// Reads the `.deb` `deb` (its bytes from the `ar` magic on, as a
/// stream), calling `each` for every ELF file of its data archive as it is
/// read; its control fields go to `out.controls`, what cannot be read to
/// `out.errors`, each error naming the member it is about. `path` names
/// the package (as shown).
pub fn read_deb(path: &str, deb: &mut dyn Read, out: &mut Expanded, each: &mut EachElf<'_>) {
    let bad = |reason: String| AuditError::BadPackage {
        path: path.to_string(),
        reason,
    };
    let mut ar = ArReader::new(deb);
    if let Err(reason) = ar.magic() {
        return out.errors.push(bad(reason));
    }
    loop {
        let member = match ar.next_member() {
            Ok(Some(m)) => m,
            Ok(None) => break,
            Err(reason) => return out.errors.push(bad(reason)),
        };
        let name = member.name;
        if name.starts_with("control.tar") {
            // Its name and version; without them (a damaged or unreadable
            // control member) the package is named by its file, and its
            // data archive still audited.
            if let Some(c) = control(&name, member.size, &mut ar) {
                out.controls.push((path.to_string(), c));
            }
            continue;
        }
        if !name.starts_with("data.tar") {
            continue;
        }
        let mut found = 0usize;
        let mut counted = |p: &str, d: &[u8]| {
            found += 1;
            each(p, d)
        };
        let errors_before = out.errors.len();
        let read = with_decompressed(&name, &mut ar, |tar| read_tar(path, tar, out, &mut counted));
        if let Err(reason) = read {
            return out.errors.push(bad(format!("{name}: {reason}")));
        }
        // An ELF file refused for its size is said so, not "no ELF file".
        if found == 0 && out.errors.len() == errors_before {
            out.errors.push(AuditError::NoElfInPackage {
                path: path.to_string(),
            });
        }
        return;
    }
    out.errors.push(bad(
        "no data.tar member (deb(5): debian-binary, control.tar.*, data.tar.*)".into(),
    ));
}

/// The most of a control archive member read (compressed; Debian's hold
/// a handful of small files: control, md5sums, maintainer scripts), of
/// its entries, and of its `control` file.
const MAX_CONTROL_MEMBER: u64 = 16 << 20;
const MAX_CONTROL_ENTRIES: usize = 64;
const MAX_CONTROL_FILE: u64 = 1 << 20;

/// The control fields of control archive member `name` (`control.tar.xz`,
/// `.zst`, `.gz` or plain) of `size` bytes, read from `body`: its
/// `control` file among its first [`MAX_CONTROL_ENTRIES`] entries.
fn control(name: &str, size: u64, body: &mut dyn Read) -> Option<DebControl> {
    if size > MAX_CONTROL_MEMBER {
        return None;
    }
    let mut found = None;
    let mut entries = 0;
    let read = with_decompressed(name, body, |tar| {
        walk_tar(tar, &mut |file| {
            entries += 1;
            if !matches!(file.name.as_str(), "/control" | "control") {
                return Ok(entries < MAX_CONTROL_ENTRIES);
            }
            let mut text = Vec::new();
            file.data
                .take(MAX_CONTROL_FILE)
                .read_to_end(&mut text)
                .map_err(|e| format!("{}: {}", file.name, said(e)))?;
            found = DebControl::parse(&String::from_utf8_lossy(&text));
            Ok(false)
        })
    });
    read.ok().and(found)
}

/// Calls `each` for every ELF file of the data archive `tar` (streamed:
/// one member is held at a time, in a buffer that grows as its bytes
/// arrive; a member that is not ELF is passed over without being held,
/// whatever its size). A member too large is refused by name and the
/// rest read on; an error that ends the archive is returned, naming the
/// member.
fn read_tar(
    path: &str,
    tar: &mut dyn Read,
    out: &mut Expanded,
    each: &mut EachElf<'_>,
) -> Result<(), String> {
    let mut buf = Vec::new();
    walk_tar(tar, &mut |file| {
        match read_member(file, &mut buf)? {
            Member::Elf => each(&format!("{path}!{}", file.name), &buf),
            Member::NotElf => out.skipped_non_elf += 1,
            Member::TooLarge => out.errors.push(AuditError::BadPackage {
                path: path.to_string(),
                reason: format!(
                    "{}: an ELF file of {} MiB, larger than the {} MiB atomlab audits; not audited",
                    file.name,
                    file.size >> 20,
                    MAX_ELF_BYTES >> 20
                ),
            }),
        }
        Ok(true)
    })
}

/// What [`read_member`] found.
enum Member {
    /// An ELF file, now in the buffer.
    Elf,
    /// Something else, passed over.
    NotElf,
    /// An ELF file past [`MAX_ELF_BYTES`], by its header: not read.
    TooLarge,
}

/// Reads tar member `file` into `buf` (cleared first) when it is an ELF
/// file within [`MAX_ELF_BYTES`]; of any other member at most the first 4
/// bytes are read. A member cut short is an error naming it.
fn read_member(file: &mut TarFile<'_>, buf: &mut Vec<u8>) -> Result<Member, String> {
    buf.clear();
    let cannot = |e: std::io::Error| format!("{}: {}", file.name, said(e));
    (&mut file.data).take(4).read_to_end(buf).map_err(cannot)?;
    if buf != ELF_MAGIC {
        return Ok(Member::NotElf);
    }
    if file.size > MAX_ELF_BYTES {
        // Refused by the size its header claims, before a byte more is read.
        return Ok(Member::TooLarge);
    }
    // No reserve from the header's size: a header may claim 2 GiB over a
    // few bytes. The buffer grows as the bytes arrive.
    (&mut file.data)
        .take(MAX_ELF_BYTES - 4)
        .read_to_end(buf)
        .map_err(|e| format!("{}: {}", file.name, said(e)))?;
    if (buf.len() as u64) < file.size {
        return Err(format!(
            "{}: cut short: its tar header says {} bytes, the archive ends after {}",
            file.name,
            file.size,
            buf.len()
        ));
    }
    Ok(Member::Elf)
}

/// A regular file of a tar archive, at hand.
struct TarFile<'a> {
    /// Its path as shown ([`member_path`]).
    name: String,
    /// Its size, as its header (or pax header) gives it.
    size: u64,
    /// Its bytes.
    data: &'a mut dyn Read,
}

/// A member's path as shown: the archive's bytes (a sequence that is not
/// UTF-8 as U+FFFD), `./usr/bin/x` as the installed path `/usr/bin/x`,
/// anything else (`usr/x`, `../../etc/x`) exactly as it is, control
/// characters made visible and the whole cut at [`MAX_NAME_CHARS`].
fn member_path(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let text = match text.strip_prefix("./") {
        Some(rest) => format!("/{rest}"),
        None => text.into_owned(),
    };
    shown(&text, MAX_NAME_CHARS)
}

/// Calls `visit` for each regular file of tar archive `tar` until it
/// returns `false`. Headers are read raw (the `tar` crate would read a GNU
/// long name or pax header of any size into memory): a long name (`L`)
/// and a pax header's `path` and `size` (`x`) apply to the entry after
/// them, read up to [`MAX_TAR_EXTENSION`]; global pax headers and long
/// link names are passed over. An error names the member it is about, or
/// the member before it.
fn walk_tar(
    tar: &mut dyn Read,
    visit: &mut dyn FnMut(&mut TarFile<'_>) -> Result<bool, String>,
) -> Result<(), String> {
    let mut archive = tar::Archive::new(tar);
    let entries = archive
        .entries()
        .map_err(|e| format!("data archive unreadable: {}", said(e)))?
        .raw(true);
    let mut last: Option<String> = None;
    let place = |last: &Option<String>| match last {
        Some(name) => format!("after member {name}"),
        None => "at its first member".to_string(),
    };
    let mut long_name: Option<Vec<u8>> = None;
    let mut pax: Option<Vec<u8>> = None;
    for entry in entries {
        let mut entry =
            entry.map_err(|e| format!("tar archive unreadable {}: {}", place(&last), said(e)))?;
        let kind = entry.header().entry_type();
        if kind.is_gnu_longname() || kind.is_pax_local_extensions() {
            let what = if kind.is_gnu_longname() {
                "a GNU long name"
            } else {
                "a pax header"
            };
            if entry.size() > MAX_TAR_EXTENSION {
                return Err(format!(
                    "{what} of {} bytes {}, more than the {} KiB atomlab reads: not a tar archive it can read",
                    entry.size(),
                    place(&last),
                    MAX_TAR_EXTENSION >> 10
                ));
            }
            let mut bytes = Vec::new();
            entry
                .read_to_end(&mut bytes)
                .map_err(|e| format!("{what} {}: {}", place(&last), said(e)))?;
            if kind.is_gnu_longname() {
                long_name = Some(bytes);
            } else {
                pax = Some(bytes);
            }
            continue;
        }
        if kind.is_gnu_longlink() || kind.is_pax_global_extensions() {
            continue;
        }
        let (pax_path, pax_size) = pax.take().map_or((None, None), |p| pax_fields(&p));
        let raw_name = match (long_name.take(), pax_path) {
            (Some(mut l), _) => {
                // A GNU long name is a C string, as the name field is.
                if let Some(nul) = l.iter().position(|&b| b == 0) {
                    l.truncate(nul);
                }
                l
            }
            (None, Some(p)) => p,
            (None, None) => entry.path_bytes().into_owned(),
        };
        let name = member_path(&raw_name);
        last = Some(name.clone());
        let size = entry.size();
        if pax_size.is_some_and(|s| s != size) {
            // The entries after it lie past the pax size, which the raw
            // reader does not know: refuse rather than misread them.
            return Err(format!(
                "{name}: its pax header gives a size ({}) other than its tar header's ({size}); atomlab reads members whose size fits the tar header (up to 8 GiB)",
                pax_size.unwrap_or(0)
            ));
        }
        if kind.is_gnu_sparse() && entry.header().as_gnu().is_some_and(|g| g.is_extended()) {
            // Read raw, the extra sparse headers would be taken for data.
            return Err(format!(
                "{name}: a GNU sparse file with more than 4 regions, which atomlab does not read"
            ));
        }
        if kind != tar::EntryType::Regular && kind != tar::EntryType::Continuous {
            continue;
        }
        let mut file = TarFile {
            name,
            size,
            data: &mut entry,
        };
        if !visit(&mut file)? {
            break;
        }
    }
    Ok(())
}

/// The `path` and `size` records of a pax extended header (POSIX.1-2001
/// `pax`, "pax Extended Header": records "LENGTH KEY=VALUE\n", LENGTH
/// counting the whole record, so that a value may hold a newline). A
/// record that does not parse ends the reading.
fn pax_fields(pax: &[u8]) -> (Option<Vec<u8>>, Option<u64>) {
    let (mut path, mut size) = (None, None);
    let mut rest = pax;
    while let Some(space) = rest.iter().position(|&b| b == b' ') {
        let Some(len) = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|l| l.parse::<usize>().ok())
        else {
            break;
        };
        let Some(record) = rest.get(space + 1..len) else {
            break;
        };
        let Some(record) = record.strip_suffix(b"\n") else {
            break;
        };
        if let Some(eq) = record.iter().position(|&b| b == b'=') {
            let (key, value) = (&record[..eq], &record[eq + 1..]);
            match key {
                b"path" => path = Some(value.to_vec()),
                b"size" => size = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()),
                _ => {}
            }
        }
        rest = &rest[len..];
    }
    (path, size)
}

/// Runs `f` over the decompressed stream of archive member `name` (xz,
/// zstd, gzip or none), read from `body` as it goes, never held whole.
fn with_decompressed(
    name: &str,
    body: &mut dyn Read,
    f: impl FnOnce(&mut dyn Read) -> Result<(), String>,
) -> Result<(), String> {
    if name.ends_with(".xz") {
        let limit_kib = MAX_XZ_DICT_MIB * 1024 + 1024;
        let xz =
            lzma_rust2::XzReader::new_mem_limit(std::io::BufReader::new(body), true, limit_kib);
        f(&mut Chunked(XzLimited(xz)))
    } else if name.ends_with(".zst") {
        // The frame header first: ruzstd reserves the window it declares.
        let mut head = Vec::with_capacity(ZSTD_HEADER_MAX);
        body.take(ZSTD_HEADER_MAX as u64)
            .read_to_end(&mut head)
            .map_err(|e| format!("zstd: {}", said(e)))?;
        if let Some(window) = zstd_window(&head).filter(|&w| w > MAX_ZSTD_WINDOW_MIB << 20) {
            return Err(format!(
                "zstd: the archive asks for a window of {} MiB, more than the {MAX_ZSTD_WINDOW_MIB} MiB atomlab allows (zstd's own default limit)",
                window >> 20
            ));
        }
        let dec = ruzstd::decoding::StreamingDecoder::new(head.as_slice().chain(body))
            .map_err(|e| format!("zstd: {}", said(e)))?;
        f(&mut Chunked(dec))
    } else if name.ends_with(".gz") {
        f(&mut Chunked(flate2::read::GzDecoder::new(body)))
    } else if name.ends_with(".tar") {
        f(body)
    } else {
        Err("unknown compression (expected .xz, .zst or .gz)".into())
    }
}

/// The most bytes of a zstd frame header: magic, descriptor, window,
/// dictionary id and content size (RFC 8878, 3.1.1.1).
const ZSTD_HEADER_MAX: usize = 4 + 1 + 1 + 4 + 8;

/// The window a zstd frame header declares (RFC 8878, 3.1.1.1.2: from
/// the window descriptor, or the frame content size for a single-segment
/// frame); `None` when `head` is not a whole zstd frame header (ruzstd
/// then says what is wrong).
fn zstd_window(head: &[u8]) -> Option<u64> {
    if head.get(..4)? != [0x28, 0xb5, 0x2f, 0xfd] {
        return None;
    }
    let descriptor = *head.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    if !single_segment {
        let w = *head.get(5)?;
        let base = 1u64 << (10 + u32::from(w >> 3));
        return Some(base + (base / 8) * u64::from(w & 7));
    }
    let dict_len = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let at = 5 + dict_len;
    let field = |n: usize| -> Option<u64> {
        let bytes = head.get(at..at + n)?;
        Some(bytes.iter().rev().fold(0u64, |v, &b| v << 8 | u64::from(b)))
    };
    match descriptor >> 6 {
        0 => field(1),
        1 => field(2).map(|v| v + 256),
        2 => field(4),
        _ => field(8),
    }
}

/// The most asked of a decompressor in one read.
const READ_CHUNK: usize = 1 << 20;

/// A decompressor asked for at most [`READ_CHUNK`] bytes a read: ruzstd
/// decodes as much as it is asked for into a buffer of its own before
/// copying it out, and `read_to_end` asks for all the room it has (which
/// doubled the memory an ELF member took).
struct Chunked<R: Read>(R);

impl<R: Read> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(READ_CHUNK);
        self.0.read(&mut buf[..n])
    }
}

/// An xz stream whose dictionary limit, when met, is said in words.
struct XzLimited<R: Read>(lzma_rust2::XzReader<R>);

impl<R: Read> Read for XzLimited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::OutOfMemory {
                std::io::Error::other(format!(
                    "xz: the archive asks for a dictionary larger than the {MAX_XZ_DICT_MIB} MiB atomlab allows ({})",
                    said(e)
                ))
            } else {
                std::io::Error::other(format!("xz: {}", said(e)))
            }
        })
    }
}

/// Whether `path` is a package: a file starting with the `ar` magic (a
/// `.deb`, or an archive that then gets its "bad Debian package" error).
pub fn looks_like_package(path: &Path) -> bool {
    let mut head = [0u8; 8];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    head[..n].starts_with(AR_MAGIC)
}

/// Adds to `units` what [`expand`] would audit under `path`, one unit per
/// package or ELF file, without reading them: `path` itself when it is a
/// file; for a directory, its ELF files and `.deb` packages, walked as the
/// module's documentation says (links passed over go to
/// `out.skipped_links`). Other files in directories are counted in
/// `out.skipped_non_elf`.
pub fn list_units(path: &Path, units: &mut Vec<PathBuf>, out: &mut Expanded) {
    match std::fs::metadata(path) {
        Err(e) => out.errors.push(io_err(path, e)),
        Ok(m) if m.is_dir() => {
            let before = units.len();
            list_dir(path, units, out);
            if units.len() == before {
                out.errors.push(AuditError::NoElfInDirectory {
                    path: path_shown(path),
                });
            }
        }
        Ok(_) => units.push(path.to_path_buf()),
    }
}

/// A file a directory walk found.
struct Found {
    path: PathBuf,
    /// Reached through a symbolic link.
    link: bool,
    /// Its device and inode, which tell one file under two names.
    id: Option<(u64, u64)>,
}

/// Adds to `units` the ELF files and `.deb` packages below `dir`, in name
/// order. A symbolic link to a regular file counts as that file, unless
/// the file is listed under its own name too (or through an earlier
/// link): then it is passed over, as are links to directories (which
/// could loop) and links to nothing, each named in `out.skipped_links`.
pub(crate) fn list_dir(dir: &Path, units: &mut Vec<PathBuf>, out: &mut Expanded) {
    let mut found = Vec::new();
    collect(dir, &mut found, out);
    let own_names: HashSet<(u64, u64)> = found
        .iter()
        .filter(|f| !f.link)
        .filter_map(|f| f.id)
        .collect();
    let mut linked = HashSet::new();
    for f in found {
        let twice =
            f.id.is_some_and(|id| own_names.contains(&id) || !linked.insert(id));
        if f.link && twice {
            out.skipped_links.push(SkippedLink {
                path: path_shown(&f.path),
                why: "a link to a file audited under another name",
            });
        } else {
            units.push(f.path);
        }
    }
}

/// The files below `dir` that are ELF files or `.deb` packages, walked in
/// name order.
fn collect(dir: &Path, found: &mut Vec<Found>, out: &mut Expanded) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            out.errors.push(io_err(dir, e));
            return;
        }
    };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).collect();
    paths.sort_by_key(|e| e.file_name());
    for entry in paths {
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            collect(&path, found, out);
            continue;
        }
        // A link is followed to what it points to.
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(_) if ft.is_symlink() => {
                out.skipped_links.push(SkippedLink {
                    path: path_shown(&path),
                    why: "a link to nothing",
                });
                continue;
            }
            Err(e) => {
                out.errors.push(io_err(&path, e));
                continue;
            }
        };
        if meta.is_dir() {
            out.skipped_links.push(SkippedLink {
                path: path_shown(&path),
                why: "a link to a directory, not followed (so that nothing is audited twice)",
            });
            continue;
        }
        if !meta.is_file() {
            continue;
        }
        if is_unit(&path) {
            found.push(Found {
                path,
                link: ft.is_symlink(),
                id: file_id(&meta),
            });
        } else {
            out.skipped_non_elf += 1;
        }
    }
}

/// Whether a file in a directory is audited: an ELF file, or an `ar`
/// archive named `.deb` (the link's name or its target's).
fn is_unit(path: &Path) -> bool {
    let mut head = Vec::with_capacity(8);
    let read = std::fs::File::open(path).and_then(|f| f.take(8).read_to_end(&mut head));
    if read.is_err() {
        return false;
    }
    let is_deb = |p: &Path| p.extension().is_some_and(|e| e == "deb");
    head.starts_with(ELF_MAGIC)
        || (head.starts_with(AR_MAGIC)
            && (is_deb(path) || std::fs::canonicalize(path).is_ok_and(|p| is_deb(&p))))
}

/// The device and inode of a file, where the system has them.
fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_fields_are_read_from_the_first_paragraph() {
        let text = "package: libstdc++6\nSource: gcc-12\nVersion: 12.2.0-14+deb12u1\nArchitecture: arm64\nDescription: GNU Standard C++ Library v3\n Package: not-a-field\n\nPackage: second\n";
        assert_eq!(
            DebControl::parse(text),
            Some(DebControl {
                package: "libstdc++6".into(),
                version: Some("12.2.0-14+deb12u1".into()),
                architecture: Some("arm64".into()),
            })
        );
        assert_eq!(DebControl::parse("Version: 1\nArchitecture: all\n"), None);
        assert_eq!(DebControl::parse("Package:\n"), None);
    }

    #[test]
    fn control_fields_are_kept_with_their_control_characters_visible() {
        let c = DebControl::parse("Package: evil\x1b[31m\nVersion: 1\x07\n").unwrap();
        assert_eq!(c.package, "evil\\e[31m");
        assert_eq!(c.version.as_deref(), Some("1\\x07"));
    }

    #[test]
    fn a_member_path_is_kept_as_the_archive_has_it() {
        assert_eq!(member_path(b"./usr/bin/x"), "/usr/bin/x");
        assert_eq!(member_path(b"../../../etc/evil.so"), "../../../etc/evil.so");
        assert_eq!(member_path(b".hidden/x"), ".hidden/x");
        assert_eq!(member_path(b"./a\x1b[31m\n| row |"), "/a\\e[31m\\n| row |");
        assert_eq!(member_path(b"bad\xffutf8"), "bad\u{fffd}utf8");
    }

    #[test]
    fn pax_records_are_read_by_their_length() {
        // A value with a newline in it: the length says where it ends.
        let pax = b"29 path=./a\n| forged | row |\n12 size=123\n";
        let (path, size) = pax_fields(pax);
        assert_eq!(path.as_deref(), Some(&b"./a\n| forged | row |"[..]));
        assert_eq!(size, Some(123));
        // Lengths that lie end the reading, without a panic.
        for bad in [
            &b"0 path=x\n"[..],
            b"99 path=x\n",
            b"3 path=x\n",
            b"x path=y\n",
            b"",
        ] {
            assert_eq!(pax_fields(bad), (None, None), "{bad:?}");
        }
    }

    #[test]
    fn a_zstd_window_past_the_limit_is_refused_before_it_is_allocated() {
        // Window descriptor: exponent 30 (1 TiB) and 0 mantissa.
        let huge = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 30 << 3, 0, 0];
        assert_eq!(zstd_window(&huge), Some(1 << 40));
        // Single segment with an 8-byte content size of 2^40.
        let mut single = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
        single.extend_from_slice(&(1u64 << 40).to_le_bytes());
        assert_eq!(zstd_window(&single), Some(1 << 40));
        assert_eq!(zstd_window(b"not zstd"), None);
        let err = with_decompressed("data.tar.zst", &mut &huge[..], |_| Ok(())).unwrap_err();
        assert!(
            err.contains("window of 1048576 MiB, more than the 128 MiB"),
            "{err}"
        );
    }

    #[test]
    fn an_ar_member_cut_short_is_named() {
        let mut deb = b"!<arch>\n".to_vec();
        deb.extend_from_slice(
            format!(
                "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                "debian-binary", 0, 0, 0, 100644, 4
            )
            .as_bytes(),
        );
        deb.extend_from_slice(b"2.0\n");
        deb.extend_from_slice(
            format!(
                "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                "control.tar", 0, 0, 0, 100644, 5000
            )
            .as_bytes(),
        );
        deb.extend_from_slice(&[0; 100]);
        let mut out = Expanded::default();
        unpack_deb("p.deb", &deb, &mut out);
        let errors: Vec<String> = out.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            errors,
            ["p.deb: bad Debian package: member control.tar is cut short: its header says 5000 bytes, the archive ends after 100"]
        );
    }
}
