//! What a plugin's functions do with atomics, said beside its figures:
//! `atomlab audit`'s classification ([`atomlab_audit::functions_at`]) of
//! the very functions the plugin handed atomlab.
//!
//! A function pointer from the plugin's description is mapped back to its
//! file and to the address the file gives it with `dladdr(3)`: `dli_fname`
//! is the object that holds it (the plugin, or a library it points into,
//! e.g. `pthread_mutex_lock` in the C library) and `dli_fbase` the address
//! that object's lowest `PT_LOAD` segment was mapped at (glibc's and
//! musl's `l_map_start`/`map`), so the file's virtual address is the
//! pointer minus `dli_fbase` plus that segment's page-aligned `p_vaddr`
//! (the System V gABI's program header).

use std::collections::BTreeMap;
use std::ffi::{c_void, CStr};
use std::path::PathBuf;

use atomlab_audit::{Arch, FunctionAtomics};

/// One of a variant's functions, audited.
#[derive(Debug, Clone)]
pub struct FunctionAudit {
    /// Its role in the ABI (`lock`, `unlock`, `try_lock`, `push`, `pop`,
    /// `get`, `put`, `op`).
    pub role: &'static str,
    /// The file holding it.
    pub file: PathBuf,
    /// What it does, or why that is not known.
    pub found: Result<(Arch, FunctionAtomics), String>,
    /// Whether it lies in another file than the plugin (a C library's
    /// `pthread_mutex_lock`).
    pub elsewhere: bool,
}

impl FunctionAudit {
    /// "lock uses …" in words.
    pub fn words(&self) -> String {
        match &self.found {
            Ok((arch, f)) => f.words(*arch),
            Err(why) => format!("not audited ({why})"),
        }
    }

    /// Whether it has an LSE instruction behind no CPU-feature test, and
    /// its LSE mnemonics.
    pub fn unconditional_lse(&self) -> Option<String> {
        let (_, f) = self.found.as_ref().ok()?;
        if f.lse_unconditional == 0 {
            return None;
        }
        let m = f.by_class.get(&atomlab_audit::Class::Lse)?;
        Some(m.iter().cloned().collect::<Vec<_>>().join(", "))
    }
}

/// What a variant's functions do with atomics.
#[derive(Debug, Clone, Default)]
pub struct VariantAudit {
    /// Its functions, in the ABI's order.
    pub functions: Vec<FunctionAudit>,
}

impl VariantAudit {
    /// The line for people: "lock uses an LL/SC loop (ldaxr/stxr), unlock
    /// a release store (stlr)".
    pub fn line(&self) -> String {
        self.functions
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let verb = if i == 0 { " uses " } else { " " };
                let whose = match (&f.found, f.elsewhere) {
                    (Ok((_, fa)), true) => {
                        let file = f.file.file_name().unwrap_or_default().to_string_lossy();
                        format!(" ({} in {file})", fa.name)
                    }
                    _ => String::new(),
                };
                format!("{}{whose}{verb}{}", f.role, f.words())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The file holding the code at `ptr` and its address in that file.
fn locate(ptr: *const c_void) -> Result<(PathBuf, u64, Vec<u8>), String> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the loader's tables for `ptr` and fills
    // `info`; any pointer value is allowed.
    let found = unsafe { libc::dladdr(ptr, &mut info) };
    if found == 0 || info.dli_fname.is_null() || info.dli_fbase.is_null() {
        return Err("dladdr(3) finds no loaded object holding it".into());
    }
    // SAFETY: non-null, NUL-terminated, owned by the loader and valid
    // while the object stays loaded (the caller holds the plugin).
    let fname = unsafe { CStr::from_ptr(info.dli_fname) };
    let file = PathBuf::from(fname.to_string_lossy().into_owned());
    let bytes = std::fs::read(&file)
        .or_else(|e| {
            // The main program is named by its argv[0]-like name.
            std::env::current_exe()
                .and_then(std::fs::read)
                .map_err(|_| e)
        })
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let offset = (ptr as u64).wrapping_sub(info.dli_fbase as u64);
    Ok((file, offset.wrapping_add(first_load_page(&bytes)), bytes))
}

/// The page-aligned `p_vaddr` of an ELF64 little-endian file's first
/// `PT_LOAD` segment (0 for anything else: a shared object's is 0).
fn first_load_page(b: &[u8]) -> u64 {
    let u16_at = |o: usize| b.get(o..o + 2).map(|x| u16::from_le_bytes([x[0], x[1]]));
    let u64_at = |o: usize| {
        b.get(o..o + 8)
            .and_then(|x| x.try_into().ok())
            .map(u64::from_le_bytes)
    };
    if b.len() < 64 || &b[..4] != b"\x7fELF" || b[4] != 2 || b[5] != 1 {
        return 0;
    }
    let (Some(phoff), Some(phent), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38)) else {
        return 0;
    };
    // SAFETY: sysconf has no preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    (0..usize::from(phnum))
        .filter_map(|i| {
            let at = usize::try_from(phoff).ok()? + i * usize::from(phent);
            let kind = b.get(at..at + 4)?;
            (kind == [1, 0, 0, 0]).then(|| u64_at(at + 16))?
        })
        .min()
        .map_or(0, |v| v & !(page.max(1) - 1))
}

/// Audits the functions at `fns` (role and pointer) of the plugin
/// `plugin` (its canonical path), reading each file once.
pub(crate) fn audit(
    fns: &[(&'static str, *const c_void)],
    plugin: &std::path::Path,
) -> VariantAudit {
    let mut located = Vec::new();
    let mut by_file: BTreeMap<PathBuf, (Vec<u8>, Vec<u64>)> = BTreeMap::new();
    for &(role, ptr) in fns {
        match locate(ptr) {
            Ok((file, addr, bytes)) => {
                let e = by_file.entry(file.clone()).or_insert((bytes, Vec::new()));
                e.1.push(addr);
                located.push((role, Ok((file, addr))));
            }
            Err(why) => located.push((role, Err(why))),
        }
    }
    let mut results = BTreeMap::new();
    for (file, (bytes, addrs)) in &by_file {
        let r = atomlab_audit::functions_at(&file.display().to_string(), bytes, addrs);
        results.insert(file.clone(), r);
    }
    let functions = located
        .into_iter()
        .map(|(role, at)| match at {
            Err(why) => FunctionAudit {
                role,
                file: PathBuf::new(),
                found: Err(why),
                elsewhere: false,
            },
            Ok((file, addr)) => {
                let found = match &results[&file] {
                    Err(e) => Err(e.to_string()),
                    Ok(fa) => {
                        let i = by_file[&file].1.iter().position(|a| *a == addr);
                        match i.and_then(|i| fa.functions[i].clone()) {
                            Some(f) => Ok((fa.arch, f)),
                            None => Err(format!("{addr:#x} is in no code of {}", file.display())),
                        }
                    }
                };
                let elsewhere = std::fs::canonicalize(&file).is_ok_and(|f| f != plugin);
                FunctionAudit {
                    role,
                    file,
                    found,
                    elsewhere,
                }
            }
        })
        .collect();
    VariantAudit { functions }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_load_segment_of_this_test_binary_is_read() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        // A PIE's first PT_LOAD is at 0; a non-PIE's above it; either is
        // page-aligned.
        assert_eq!(first_load_page(&exe) % 4096, 0);
        assert_eq!(first_load_page(b"not elf"), 0);
    }

    /// A function of this very binary is found and described.
    #[test]
    fn a_function_of_this_binary_is_located_and_described() {
        extern "C" fn probe(x: *const std::sync::atomic::AtomicU64) -> u64 {
            // ORDERING: SeqCst: any RMW will do; the test reads the
            // instruction the compiler gives it.
            // SAFETY: the caller passes a live atomic.
            unsafe { (*x).fetch_add(1, std::sync::atomic::Ordering::SeqCst) }
        }
        let a = std::sync::atomic::AtomicU64::new(0);
        let f: extern "C" fn(*const std::sync::atomic::AtomicU64) -> u64 = probe;
        assert_eq!(std::hint::black_box(f)(&a), 0);
        let exe = std::env::current_exe().unwrap().canonicalize().unwrap();
        let v = audit(&[("lock", probe as *const c_void)], &exe);
        let words = v.line();
        assert!(words.starts_with("lock uses "), "{words}");
        if cfg!(target_arch = "x86_64") {
            assert!(words.contains("lock xadd"), "{words}");
        }
    }
}
