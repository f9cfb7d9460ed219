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

fn walk(dir: &Path, out: &mut Expanded) {
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
            walk(&path, out);
        } else if ft.is_file() {
            let mut head = [0u8; 8];
            let n = std::fs::File::open(&path)
                .and_then(|mut f| f.read(&mut head))
                .unwrap_or(0);
            if head[..n].starts_with(ELF_MAGIC) {
                match std::fs::read(&path) {
                    Ok(data) => out.inputs.push(ElfInput {
                        path: path.display().to_string(),
                        data,
                    }),
                    Err(e) => out.errors.push(io_err(&path, e)),
                }
            } else if head[..n].starts_with(AR_MAGIC)
                && path.extension().is_some_and(|e| e == "deb")
            {
                match std::fs::read(&path) {
                    Ok(data) => unpack_deb(&path.display().to_string(), &data, out),
                    Err(e) => out.errors.push(io_err(&path, e)),
                }
            } else {
                out.skipped_non_elf += 1;
            }
        }
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
    let mut tar_bytes = None;
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
        match decompress(&name, body) {
            Ok(t) => tar_bytes = Some(t),
            Err(reason) => {
                out.errors.push(bad(format!("{name}: {reason}")));
                return;
            }
        }
        break;
    }
    let Some(tar_bytes) = tar_bytes else {
        out.errors.push(bad("no data.tar member".into()));
        return;
    };
    let before = out.inputs.len();
    let mut tar = tar::Archive::new(std::io::Cursor::new(tar_bytes));
    let entries = match tar.entries() {
        Ok(e) => e,
        Err(e) => {
            out.errors
                .push(bad(format!("data archive unreadable: {e}")));
            return;
        }
    };
    for entry in entries {
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                out.errors
                    .push(bad(format!("data archive unreadable: {e}")));
                break;
            }
        };
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let member = entry
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "?".into());
        let mut bytes = Vec::new();
        if let Err(e) = entry.read_to_end(&mut bytes) {
            out.errors.push(bad(format!("{member}: {e}")));
            continue;
        }
        if bytes.starts_with(ELF_MAGIC) {
            let member = member.trim_start_matches('.');
            out.inputs.push(ElfInput {
                path: format!("{path}!{member}"),
                data: bytes,
            });
        } else {
            out.skipped_non_elf += 1;
        }
    }
    if out.inputs.len() == before {
        out.errors.push(bad("holds no ELF file".into()));
    }
}

fn decompress(name: &str, body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    if name.ends_with(".xz") {
        let mut input = std::io::BufReader::new(body);
        lzma_rs::xz_decompress(&mut input, &mut out).map_err(|e| format!("xz: {e}"))?;
    } else if name.ends_with(".zst") {
        let mut dec =
            ruzstd::decoding::StreamingDecoder::new(body).map_err(|e| format!("zstd: {e}"))?;
        dec.read_to_end(&mut out)
            .map_err(|e| format!("zstd: {e}"))?;
    } else if name.ends_with(".gz") {
        flate2::read::GzDecoder::new(body)
            .read_to_end(&mut out)
            .map_err(|e| format!("gzip: {e}"))?;
    } else if name == "data.tar" {
        out.extend_from_slice(body);
    } else {
        return Err("unknown compression (expected .xz, .zst or .gz)".into());
    }
    Ok(out)
}
