//! Turning the command line's paths into ELF images: plain files, directories
//! (walked recursively, symbolic links not followed so nothing is counted
//! twice) and Debian packages (an `ar` archive, `deb(5)`, whose
//! `data.tar.{xz,zst,gz}` member holds the installed files).

use std::io::Read;
use std::path::Path;

use crate::error::AuditError;

/// One ELF file to audit: where it came from and its bytes.
pub struct ElfInput {
    /// Display path (`pkg.deb!/usr/bin/x` for package members).
    pub path: String,
    /// The whole file.
    pub data: Vec<u8>,
}

/// What a path expanded to.
#[derive(Default)]
pub struct Expanded {
    /// ELF files (and files given by name, ELF or not: those get a clear error).
    pub inputs: Vec<ElfInput>,
    /// Paths that could not be read or unpacked.
    pub errors: Vec<AuditError>,
    /// Non-ELF files passed over inside directories and packages.
    pub skipped_non_elf: u64,
    /// Each package's control fields (its path as given, then the fields),
    /// for the packages whose control member could be read.
    pub controls: Vec<(String, DebControl)>,
}

/// What a binary package says of itself in its control file
/// (deb-control(5)): the fields atomlab uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DebControl {
    /// `Package:`, the name (`libstdc++6`).
    pub package: String,
    /// `Version:` (`12.2.0-14+deb12u1`).
    pub version: Option<String>,
    /// `Architecture:` (`arm64`, `all`).
    pub architecture: Option<String>,
}

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
            let value = (!value.is_empty()).then(|| value.to_string());
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

fn io_err(path: &Path, source: std::io::Error) -> AuditError {
    AuditError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Expands `path` into ELF inputs.
pub fn expand(path: &Path, out: &mut Expanded) {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            out.errors.push(io_err(path, e));
            return;
        }
    };
    if meta.is_dir() {
        let before = out.inputs.len();
        walk(path, out);
        if out.inputs.len() == before {
            out.errors.push(AuditError::NoElfInDirectory {
                path: path.display().to_string(),
            });
        }
        return;
    }
    if meta.len() > MAX_ELF_BYTES {
        out.errors.push(too_large(path, meta.len()));
        return;
    }
    let data = match std::fs::read(path) {
        Ok(d) => d,
        Err(e) => {
            out.errors.push(io_err(path, e));
            return;
        }
    };
    if data.starts_with(AR_MAGIC) && is_deb(&data) {
        unpack_deb(&path.display().to_string(), &data, out);
    } else {
        // Given by name: audit it, so that a non-ELF gets its error.
        out.inputs.push(ElfInput {
            path: path.display().to_string(),
            data,
        });
    }
}

/// A file past [`MAX_ELF_BYTES`], refused before it is read.
fn too_large(path: &Path, len: u64) -> AuditError {
    io_err(
        path,
        std::io::Error::other(format!(
            "{} MiB, larger than the {} MiB atomlab reads of one file; not audited",
            len >> 20,
            MAX_ELF_BYTES >> 20
        )),
    )
}

/// Every ELF file and `.deb` package below `dir`, as [`list_units`] finds
/// them (the one directory walk), read and added.
fn walk(dir: &Path, out: &mut Expanded) {
    let mut units = Vec::new();
    list_dir(dir, &mut units, out);
    for path in units {
        read_listed(&path, out);
    }
}

/// [`read_listed`] into `buf`, a worker's buffer kept from file to file
/// (a fresh allocation of megabytes per file cost page faults and `malloc`
/// about a tenth of an archive's audit): `true` when `buf` now holds the
/// ELF file to audit; a `.deb` unpacked and any error go to `out`.
pub(crate) fn read_listed_into(path: &Path, buf: &mut Vec<u8>, out: &mut Expanded) -> bool {
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if len > MAX_ELF_BYTES {
        out.errors.push(too_large(path, len));
        return false;
    }
    buf.clear();
    buf.reserve(usize::try_from(len).unwrap_or(0));
    match std::fs::File::open(path).and_then(|mut f| f.read_to_end(buf)) {
        // list_dir keeps `ar` files only when named .deb.
        Ok(_) if buf.starts_with(AR_MAGIC) => {
            unpack_deb(&path.display().to_string(), buf, out);
            false
        }
        Ok(_) => true,
        Err(e) => {
            out.errors.push(io_err(path, e));
            false
        }
    }
}

/// Reads one unit [`list_dir`] found: an ELF file, or a `.deb` unpacked.
pub(crate) fn read_listed(path: &Path, out: &mut Expanded) {
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if len > MAX_ELF_BYTES {
        out.errors.push(too_large(path, len));
        return;
    }
    match std::fs::read(path) {
        // list_dir keeps `ar` files only when named .deb.
        Ok(data) if data.starts_with(AR_MAGIC) => {
            unpack_deb(&path.display().to_string(), &data, out)
        }
        Ok(data) => out.inputs.push(ElfInput {
            path: path.display().to_string(),
            data,
        }),
        Err(e) => out.errors.push(io_err(path, e)),
    }
}

fn is_deb(data: &[u8]) -> bool {
    match object::read::archive::ArchiveFile::parse(data) {
        Ok(ar) => ar
            .members()
            .filter_map(|m| m.ok())
            .any(|m| m.name() == b"debian-binary"),
        Err(_) => false,
    }
}

/// Unpacks a `.deb` and adds every ELF file of its data archive.
pub fn unpack_deb(path: &str, data: &[u8], out: &mut Expanded) {
    let bad = |reason: String| AuditError::BadPackage {
        path: path.to_string(),
        reason,
    };
    let archive = match object::read::archive::ArchiveFile::parse(data) {
        Ok(a) => a,
        Err(e) => {
            out.errors.push(bad(format!("not an ar archive: {e}")));
            return;
        }
    };
    for member in archive.members() {
        let member = match member {
            Ok(m) => m,
            Err(e) => {
                out.errors.push(bad(format!("corrupt ar member: {e}")));
                return;
            }
        };
        let name = String::from_utf8_lossy(member.name())
            .trim_end_matches('/')
            .to_string();
        if name.starts_with("control.tar") {
            // Its name and version; without them (a damaged or unreadable
            // control member) the package is named by its file, and its
            // data archive still audited.
            if let Some(c) = member.data(data).ok().and_then(|b| control(&name, b)) {
                out.controls.push((path.to_string(), c));
            }
            continue;
        }
        if !name.starts_with("data.tar") {
            continue;
        }
        let body = match member.data(data) {
            Ok(b) => b,
            Err(e) => {
                out.errors.push(bad(format!("{name} is cut short: {e}")));
                return;
            }
        };
        let before = out.inputs.len();
        if let Err(reason) = with_decompressed(&name, body, |tar| read_tar(path, tar, out)) {
            out.errors.push(bad(format!("{name}: {reason}")));
            return;
        }
        if out.inputs.len() == before {
            out.errors.push(AuditError::NoElfInPackage {
                path: path.to_string(),
            });
        }
        return;
    }
    out.errors.push(bad("no data.tar member".into()));
}

/// The control fields of control archive member `name` (`control.tar.xz`,
/// `.zst`, `.gz` or plain): its `control` file, read up to 1 MiB, among
/// the first 64 entries of a member of at most 16 MiB (Debian's hold a
/// handful of small files: control, md5sums, maintainer scripts).
fn control(name: &str, body: &[u8]) -> Option<DebControl> {
    if body.len() > 16 << 20 {
        return None;
    }
    let mut found = None;
    let read = with_decompressed(name, body, |tar| {
        let mut tar = tar::Archive::new(tar);
        let entries = tar.entries().map_err(|e| e.to_string())?;
        for entry in entries.take(64) {
            let mut entry = entry.map_err(|e| e.to_string())?;
            let is_control = entry
                .path()
                .is_ok_and(|p| p.to_string_lossy().trim_start_matches("./") == "control");
            if !is_control {
                continue;
            }
            let mut text = Vec::new();
            (&mut entry)
                .take(1 << 20)
                .read_to_end(&mut text)
                .map_err(|e| e.to_string())?;
            found = DebControl::parse(&String::from_utf8_lossy(&text));
            break;
        }
        Ok(())
    });
    read.ok().and(found)
}

/// The largest ELF file audited (2 GiB): a package member or a file given
/// by name beyond it is refused with the limit, not read into memory.
pub const MAX_ELF_BYTES: u64 = 2 << 30;

/// Adds every ELF file of the data archive `tar` (streamed: a member that
/// is not ELF is passed over without being held in memory, whatever its
/// size).
fn read_tar(path: &str, tar: &mut dyn Read, out: &mut Expanded) -> Result<(), String> {
    let mut tar = tar::Archive::new(tar);
    let entries = tar
        .entries()
        .map_err(|e| format!("data archive unreadable: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("data archive unreadable: {e}"))?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let member = entry
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "?".into());
        let member = member.trim_start_matches('.').to_string();
        let mut head = Vec::with_capacity(4);
        (&mut entry)
            .take(4)
            .read_to_end(&mut head)
            .map_err(|e| format!("{member}: {e}"))?;
        if head != ELF_MAGIC {
            out.skipped_non_elf += 1;
            continue;
        }
        let size = entry.size();
        if size > MAX_ELF_BYTES {
            out.errors.push(AuditError::BadPackage {
                path: path.to_string(),
                reason: format!(
                    "{member}: an ELF file of {} MiB, larger than the {} MiB atomlab audits; not audited",
                    size >> 20,
                    MAX_ELF_BYTES >> 20
                ),
            });
            continue;
        }
        let mut bytes = head;
        bytes.reserve(size.saturating_sub(4) as usize);
        (&mut entry)
            .take(MAX_ELF_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{member}: {e}"))?;
        out.inputs.push(ElfInput {
            path: format!("{path}!{member}"),
            data: bytes,
        });
    }
    Ok(())
}

/// Runs `f` over the decompressed stream of data archive member `name`
/// (xz, zstd, gzip or none), without holding it in memory: xz, whose
/// decoder writes rather than reads, decompresses on a thread into a pipe.
fn with_decompressed(
    name: &str,
    body: &[u8],
    f: impl FnOnce(&mut dyn Read) -> Result<(), String>,
) -> Result<(), String> {
    if name.ends_with(".xz") {
        let (mut reader, mut writer) =
            std::io::pipe().map_err(|e| format!("cannot make a pipe: {e}"))?;
        std::thread::scope(|s| {
            let decoder = s.spawn(move || {
                let mut input = std::io::BufReader::new(body);
                // Ends with an error when the reader stops early (a broken
                // pipe), which the reader's own result then explains.
                lzma_rs::xz_decompress(&mut input, &mut writer).map_err(|e| format!("xz: {e}"))
            });
            let read = f(&mut reader);
            if read.is_ok() {
                // The tar's end-of-archive padding: read it, so that the
                // decoder finishes instead of meeting a closed pipe.
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
            }
            drop(reader);
            let decoded = decoder
                .join()
                .unwrap_or_else(|_| Err("xz: the decoder stopped".into()));
            read?;
            decoded
        })
    } else if name.ends_with(".zst") {
        let mut dec =
            ruzstd::decoding::StreamingDecoder::new(body).map_err(|e| format!("zstd: {e}"))?;
        f(&mut dec)
    } else if name.ends_with(".gz") {
        f(&mut flate2::read::GzDecoder::new(body))
    } else if name.ends_with(".tar") {
        f(&mut { body })
    } else {
        Err("unknown compression (expected .xz, .zst or .gz)".into())
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
/// file; for a directory, its ELF files and `.deb` packages (walked in name
/// order, symbolic links not followed). Other files in directories are
/// counted in `out.skipped_non_elf`.
pub fn list_units(path: &Path, units: &mut Vec<std::path::PathBuf>, out: &mut Expanded) {
    match std::fs::metadata(path) {
        Err(e) => out.errors.push(io_err(path, e)),
        Ok(m) if m.is_dir() => {
            let before = units.len();
            list_dir(path, units, out);
            if units.len() == before {
                out.errors.push(AuditError::NoElfInDirectory {
                    path: path.display().to_string(),
                });
            }
        }
        Ok(_) => units.push(path.to_path_buf()),
    }
}

pub(crate) fn list_dir(dir: &Path, units: &mut Vec<std::path::PathBuf>, out: &mut Expanded) {
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
        if ft.is_symlink() {
            continue;
        }
        if ft.is_dir() {
            list_dir(&path, units, out);
        } else if ft.is_file() {
            let mut head = [0u8; 8];
            let n = std::fs::File::open(&path)
                .and_then(|mut f| f.read(&mut head))
                .unwrap_or(0);
            if head[..n].starts_with(ELF_MAGIC)
                || (head[..n].starts_with(AR_MAGIC) && path.extension().is_some_and(|e| e == "deb"))
            {
                units.push(path);
            } else {
                out.skipped_non_elf += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DebControl;

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
}
