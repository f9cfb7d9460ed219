//! A request body from a file (`atomlab load --body FILE`): every
//! request carries it from memory, so only a regular file of at most
//! [`MAX_BODY`] is read (a device or a pipe would be read until memory
//! runs out: /dev/zero never ends).

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use crate::LoadError;

/// The largest `--body` file: every request carries it, from memory.
pub const MAX_BODY: u64 = 64 << 20;

/// `--body`'s bytes: a regular file of at most [`MAX_BODY`] (a device or a
/// pipe would be read until memory runs out: /dev/zero never ends).
pub fn read(p: &Path) -> Result<Vec<u8>, LoadError> {
    let bad = |why: String| LoadError::Body(p.display().to_string(), why);
    let too_big = |len: u64| {
        bad(format!(
            "{len} bytes, above the {} MiB a request body may have",
            MAX_BODY >> 20
        ))
    };
    let meta = std::fs::metadata(p).map_err(|e| bad(e.to_string()))?;
    if !meta.is_file() {
        let ft = meta.file_type();
        let what = if ft.is_dir() {
            "a directory"
        } else if ft.is_char_device() {
            "a character device"
        } else if ft.is_block_device() {
            "a block device"
        } else if ft.is_fifo() {
            "a named pipe"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(bad(format!(
            "{what}; give a regular file of at most {} MiB",
            MAX_BODY >> 20
        )));
    }
    if meta.len() > MAX_BODY {
        return Err(too_big(meta.len()));
    }
    // The file may grow between the stat and the read: read one byte past
    // the limit at most.
    let mut body = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(p)
        .and_then(|f| f.take(MAX_BODY + 1).read_to_end(&mut body))
        .map_err(|e| bad(e.to_string()))?;
    if body.len() as u64 > MAX_BODY {
        return Err(too_big(body.len() as u64));
    }
    Ok(body)
}
