//! The terminal's view of the saved runs: what `atomlab runs` prints (one
//! row a run, newest first, as the store lists them), and the words for a
//! run that `atomlab show` says before printing it again; and a stored run
//! as the HTML report takes it ([`RunView`]).

use std::io::{self, Write};

use atomlab_store::{RunMeta, RunSummary, StoredRun};

use crate::table::Table;
use crate::RunView;

/// A stored run as the HTML report draws it; an empty shard's record
/// stands for no figure and is left out.
impl From<StoredRun> for RunView {
    fn from(mut run: StoredRun) -> RunView {
        run.report
            .records
            .retain(|r| !atomlab_core::shard::is_empty_record(r));
        RunView {
            id: run.meta.id,
            label: run.meta.label,
            command_line: run.meta.command_line,
            started_unix: run.meta.started_unix,
            host: run.meta.host,
            report: run.report,
        }
    }
}

/// The run's command line without the program name, shell-quoted so it
/// can be typed again, or its command when the command line is not known
/// (a run imported from a bare `--json` document).
pub fn command_text(meta: &RunMeta) -> String {
    if meta.command_line.is_empty() {
        format!("{} (command line unknown)", meta.command)
    } else {
        crate::shell_quoted(&meta.command_line[1..])
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) from Unix seconds, as the run id carries it
/// without separators.
pub fn started(unix: f64) -> String {
    let t = crate::html::utc(unix);
    t.strip_suffix(" UTC").unwrap_or(&t).to_string()
}

/// The table of `runs` (`atomlab runs`): id, start, label, command line,
/// how many records and verdicts, host and git commit.
pub fn write_terminal(out: &mut impl Write, runs: &[RunSummary]) -> io::Result<()> {
    let mut t = Table::fitting();
    t.set_header(vec![
        "run",
        "started (UTC)",
        "label",
        "command",
        "records",
        "verdicts",
        "host",
        "git",
    ]);
    for r in runs {
        let verdicts: Vec<String> = r.verdicts.iter().map(|(v, n)| format!("{n} {v}")).collect();
        t.add_row(vec![
            r.meta.id.clone(),
            started(r.meta.started_unix),
            r.meta.label.clone().unwrap_or_else(|| "-".into()),
            command_text(&r.meta),
            r.records.to_string(),
            if verdicts.is_empty() {
                "-".into()
            } else {
                verdicts.join(", ")
            },
            r.meta.host.clone(),
            r.meta
                .git_commit
                .as_deref()
                .map(|c| c.chars().take(10).collect())
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    writeln!(out, "{t}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run imported from a bare document has no command line: its
    /// command stands in, said so; the start is the run id's time.
    #[test]
    fn runs_show_their_command_line_or_say_it_is_unknown() {
        let mut meta = RunMeta::without_commit("check", vec![], Some("base".into()));
        meta.started_unix = 1_796_099_546.7;
        meta.git_commit = Some("0123456789abcdef".into());
        let mut verdicts = std::collections::BTreeMap::new();
        verdicts.insert("PASS".to_string(), 3);
        let mut typed = meta.clone();
        typed.command_line = ["atomlab", "check", "a b.litmus"]
            .map(String::from)
            .to_vec();
        let runs = [
            RunSummary {
                meta,
                records: 3,
                verdicts,
            },
            RunSummary {
                meta: typed,
                records: 0,
                verdicts: Default::default(),
            },
        ];
        let mut out = Vec::new();
        write_terminal(&mut out, &runs).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("| 2026-12-01 04:32:26 | base "), "{text}");
        assert!(
            text.contains("| check (command line unknown) | 3 "),
            "{text}"
        );
        assert!(text.contains("| 3 PASS "), "{text}");
        assert!(text.contains("| 0123456789 |"), "{text}");
        assert!(text.contains("| check 'a b.litmus' "), "{text}");
        // Within 100 columns the table falls into two panels, each a
        // header, a rule and the two rows.
        assert_eq!(
            text.lines().filter(|l| l.starts_with('|')).count(),
            8,
            "{text}"
        );
    }
}
