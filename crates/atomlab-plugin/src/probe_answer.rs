//! The probe child's side (`crate::probe`): load the plugin that
//! `PROBE_ENV` names in this process (`Plugin::load_here`), write what
//! was found to the file [`OUT_ENV`] names, and exit.

use std::path::Path;

use crate::isolate::OUT_ENV;
use crate::load::Plugin;
use crate::probe::PROBE_ENV;

/// In a probe child (started by `crate::probe`), loads the plugin named by
/// `PROBE_ENV`, writes the answer and exits; elsewhere returns at once.
/// Call it first in `main`, before arguments are parsed.
pub fn answer_if_asked() {
    let (Some(path), Some(out)) = (std::env::var_os(PROBE_ENV), std::env::var_os(OUT_ENV)) else {
        return;
    };
    let path = Path::new(&path);
    let answer = match crate::file::check_file(path) {
        Ok((abs, sha)) => match Plugin::load_here(path, &abs, sha) {
            Ok(p) => format!("ok {}", p.variants.len()),
            Err(e) => format!("error {}", e.what),
        },
        Err(e) => format!("error {}", e.what),
    };
    let code = if std::fs::write(&out, answer).is_ok() {
        0
    } else {
        3
    };
    // The plugin's destructors are its code too: not run here (_exit).
    // SAFETY: _exit ends the process at once; nothing is left to unwind.
    unsafe { libc::_exit(code) }
}
