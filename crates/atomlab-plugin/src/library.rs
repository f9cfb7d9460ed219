//! A `dlopen(3)`ed library: opened with `RTLD_NOW | RTLD_LOCAL` (every
//! symbol resolved now, so that a missing one fails at load and not in the
//! middle of a run; nothing exported to libraries loaded later), its
//! symbols found with `dlsym(3)`, closed with `dlclose(3)` when the last
//! handle to it is dropped. Every variant of every kind holds an
//! `Arc<Library>` beside its function pointers, so that no pointer outlives
//! the code it points into.

use std::ffi::{c_void, CStr, CString};

/// A `dlopen`ed library; closed when dropped.
pub(crate) struct Library {
    handle: *mut c_void,
}

// SAFETY: a dlopen handle may be used and closed from any thread
// (dlopen(3): the dl* functions are thread-safe in glibc and musl).
unsafe impl Send for Library {}
// SAFETY: as above; the handle is only read after construction.
unsafe impl Sync for Library {}

impl Library {
    /// Opens the library at `path` (a path with a slash, so that `dlopen`
    /// does not search the library path), or `dlerror`'s words.
    pub(crate) fn open(path: &CStr) -> Result<Library, String> {
        // SAFETY: `path` is NUL-terminated. Loading runs the library's
        // constructors: that is what loading a plugin means.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(dlerror_text());
        }
        Ok(Library { handle })
    }

    /// A handle of the running program itself (`dlopen(NULL)`): what a
    /// built-in variant that goes through the plugin ABI holds in place of
    /// a plugin's library.
    pub(crate) fn this_program() -> Result<Library, String> {
        // SAFETY: a NULL path asks for the main program, already loaded:
        // no constructor runs.
        let handle = unsafe { libc::dlopen(std::ptr::null(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(dlerror_text());
        }
        Ok(Library { handle })
    }

    /// The address of the symbol `name` (NUL-terminated), if the library
    /// exports it.
    pub(crate) fn symbol(&self, name: &[u8]) -> Option<*mut c_void> {
        let name = CString::from_vec_with_nul(name.to_vec()).ok()?;
        // SAFETY: a live handle and a NUL-terminated symbol name.
        let sym = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        (!sym.is_null()).then_some(sym)
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // SAFETY: `handle` came from a successful dlopen and is closed once;
        // nothing of the library is used after the last Arc is dropped
        // (every function pointer is held together with an Arc).
        unsafe { libc::dlclose(self.handle) };
    }
}

fn dlerror_text() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string that stays
    // valid until the next dl* call on this thread; it is copied at once.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown dlopen error".into()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}
