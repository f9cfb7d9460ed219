//! Prints the audit of each path as JSON (a development aid; the CLI is
//! `atomlab audit --json`).

fn main() {
    let paths: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    let run = atomlab_audit::audit_paths(&paths);
    for e in &run.errors {
        eprintln!("error: {e}");
    }
    match serde_json::to_string_pretty(&run.audits) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("error: {e}"),
    }
}
