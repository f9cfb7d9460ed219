//! Progress on stderr for commands that run over a second: an indicatif bar
//! with done/total and an ETA when stderr is a terminal, nothing when it is
//! piped (the data on stdout stays clean either way).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `total` steps, or nothing when stderr is not a terminal.
pub struct Steps {
    bar: Option<ProgressBar>,
    started: u64,
}

impl Steps {
    /// A bar for `total` steps named `what` (`cells`, `variants`).
    pub fn new(total: usize, what: &str) -> Steps {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            let template = format!(
                "{{bar:30}} {{pos}}/{{len}} {what} [{{elapsed_precise}}, ETA {{eta}}] {{msg}}"
            );
            b.set_style(
                ProgressStyle::with_template(&template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        Steps { bar, started: 0 }
    }

    /// A step begins: the previous one is done.
    pub fn begin(&mut self, label: &str) {
        if let Some(b) = &self.bar {
            b.set_position(self.started);
            b.set_message(label.trim().to_string());
        }
        self.started += 1;
    }

    /// A step has ended, for steps run in parallel that end out of order:
    /// the count is of steps done, the message the one just done.
    pub fn done(&mut self, label: &str) {
        self.started += 1;
        if let Some(b) = &self.bar {
            b.set_position(self.started);
            b.set_message(label.trim().to_string());
        }
    }

    /// `done` steps are done (a count the work itself keeps), the message
    /// saying what is under way.
    pub fn set(&mut self, done: usize, label: &str) {
        self.started = done as u64;
        if let Some(b) = &self.bar {
            b.set_position(self.started);
            b.set_message(label.trim().to_string());
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
