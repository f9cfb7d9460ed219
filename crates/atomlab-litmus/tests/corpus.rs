//! Parses the shared reference corpus (../shared/litmus, beside the
//! repository) when it is present: every test either parses or is refused
//! with a positioned error. Skips silently on a clone without the corpus.

use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus");
    p.is_dir().then_some(p)
}

#[test]
fn corpus_parses_or_is_refused_with_a_position() {
    let Some(dir) = corpus() else {
        eprintln!("no ../shared/litmus: skipped");
        return;
    };
    let mut files = Vec::new();
    files.extend(atomlab_litmus::inputs::litmus_files(&dir));
    let mut refused = 0;
    for f in &files {
        match atomlab_litmus::parse_file(f) {
            Ok(_) => {}
            Err(e) => {
                refused += 1;
                assert!(e.line > 0 && e.column > 0, "{e}");
                eprintln!("refused: {e}");
            }
        }
    }
    eprintln!("{} tests, {} refused", files.len(), refused);
    assert!(files.len() > 400);
}

/// The X86_64 and RISC-V corpora of ../shared/litmus-more: every RISC-V test
/// parses (diy7 output in the supported subset); the X86_64 tests parse
/// except A009, whose initial state declares an array.
#[test]
fn litmus_more_x86_64_and_riscv_parse() {
    let Some(dir) = corpus().map(|p| p.join("../litmus-more")) else {
        eprintln!("no ../shared/litmus-more: skipped");
        return;
    };
    for (folder, at_least, refused_max) in [("x86_64", 41, 1), ("riscv", 152, 0)] {
        let mut files = Vec::new();
        files.extend(atomlab_litmus::inputs::litmus_files(&dir.join(folder)));
        if files.is_empty() {
            eprintln!("no ../shared/litmus-more/{folder}: skipped");
            continue;
        }
        let mut refused = 0;
        for f in &files {
            if let Err(e) = atomlab_litmus::parse_file(f) {
                refused += 1;
                assert!(e.line > 0 && e.column > 0, "{e}");
                eprintln!("refused: {e}");
            }
        }
        assert!(files.len() >= at_least, "{folder}: {} tests", files.len());
        assert!(refused <= refused_max, "{folder}: {refused} refused");
    }
}
