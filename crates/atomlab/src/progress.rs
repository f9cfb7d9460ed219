//! Progress on stderr for commands that run over a second: an indicatif bar
//! with done/total and an ETA when stderr is a terminal, nothing when it is
//! piped (the data on stdout stays clean either way). Runs of one long
//! measurement (`load`, `run`) get a [`Clock`] instead.

use std::io::IsTerminal;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use atomlab_core::progress::Live;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `total` steps, or nothing when stderr is not a terminal.
pub struct Steps {
    bar: Option<ProgressBar>,
    started: u64,
    total: usize,
    what: &'static str,
}

impl Steps {
    /// A bar for `total` steps named `what` (`cells`, `variants`).
    pub fn new(total: usize, what: &'static str) -> Steps {
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
        Steps {
            bar,
            started: 0,
            total,
            what,
        }
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

/// The one reporter of the capabilities' progress events
/// ([`atomlab_core::progress::Event`]): a [`Steps`] bar per batch, a line
/// per part of a longer job, and the live counts of a long search
/// ([`Event::Watch`](atomlab_core::progress::Event::Watch)) read by the
/// main thread ([`watch`]).
pub struct Reporter {
    steps: Option<Steps>,
    /// Whether stderr is a terminal (status lines are drawn only there).
    tty: bool,
    /// Whether a status line is on the screen, to be cleared.
    status_shown: bool,
    /// The command's name, first on a watcher's lines (`atomlab check: …`).
    command: &'static str,
    /// What the watcher reads, once a capability has sent its counts.
    watched: Option<Arc<Watched>>,
}

impl Default for Reporter {
    fn default() -> Reporter {
        Reporter {
            steps: None,
            tty: std::io::stderr().is_terminal(),
            status_shown: false,
            command: "",
            watched: None,
        }
    }
}

/// What the watcher reads: the counts, the step under way and the
/// steps done, written by the [`Reporter`] as events come.
struct Watched {
    state: Mutex<WatchState>,
}

struct WatchState {
    live: Arc<dyn Live>,
    every: Duration,
    context: String,
    command: &'static str,
    /// The step under way and since when.
    step: String,
    since: Instant,
    /// Steps done and in all, of the batch under way (0 of 0 without one).
    done: usize,
    total: usize,
    what: &'static str,
    /// The batch's bar, whose message the watcher keeps up to date.
    bar: Option<ProgressBar>,
    /// When the batch began: the bar's message changes from a second on.
    begun: Instant,
    /// When the watcher last wrote a line.
    last_line: Instant,
    /// The work is over: the watcher draws nothing more.
    over: bool,
}

/// The watcher the main thread draws ([`watch`]): the last one a
/// [`Reporter`] was given counts for. A command has one reporter at a
/// time.
static WATCHED: Mutex<Option<Arc<Watched>>> = Mutex::new(None);

/// How often the watcher looks at the counts.
const TICK: Duration = Duration::from_millis(100);

/// The watcher's loop, run by the main thread while the work runs on a
/// thread of its own (`atomlab_thread::on_stack_meanwhile`), rather than on
/// a third thread (a command of a few milliseconds would pay about 0.14 ms
/// for it): every 100 ms it draws the counts of the search under way, once
/// a capability has sent them ([`Event::Watch`](atomlab_core::progress::Event::Watch)).
/// `ended` waits up to the time given and says whether the work is over;
/// the loop returns as soon as it is. Without the work thread (the system
/// refused it) nothing calls this, and there are no live counts.
pub fn watch(ended: &mut dyn FnMut(Duration) -> bool) {
    while !ended(TICK) {
        let watched = WATCHED.lock().ok().and_then(|w| w.clone());
        if let Some(w) = watched {
            w.tick();
        }
    }
}

impl Watched {
    /// One look: the counts in the bar's message, or, where there is no
    /// bar, a line every `every` while one step runs that long.
    fn tick(&self) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if st.over {
            return;
        }
        match &st.bar {
            Some(bar) if st.begun.elapsed() > Duration::from_secs(1) => {
                bar.set_message(format!("{}: {}", st.step, st.live.so_far()));
            }
            Some(_) => {}
            None if st.since.elapsed() > st.every && st.last_line.elapsed() > st.every => {
                let context = if st.context.is_empty() {
                    format!("{}/{} {} done", st.done, st.total, st.what)
                } else {
                    st.context.clone()
                };
                eprintln!(
                    "atomlab {}: {}: running for {:.0} s: {} so far ({context})",
                    st.command,
                    st.step,
                    st.since.elapsed().as_secs_f64(),
                    st.live.so_far()
                );
                st.last_line = Instant::now();
            }
            None => {}
        }
    }
}

impl Reporter {
    /// A reporter with no batch under way.
    pub fn new() -> Reporter {
        Reporter::default()
    }

    /// A reporter for `command`, whose name starts a watcher's lines.
    pub fn of(command: &'static str) -> Reporter {
        let mut r = Reporter::default();
        r.command = command;
        r
    }

    /// Changes the watcher's state, if there is one.
    fn watching(&self, change: impl FnOnce(&mut WatchState)) {
        if let Some(Ok(mut st)) = self.watched.as_ref().map(|w| w.state.lock()) {
            change(&mut st);
        }
    }

    /// A step named `label` is under way: the watcher's clock restarts
    /// when it is another than the one it was timing.
    fn step_is(&self, label: &str) {
        self.watching(|st| {
            if st.step != label {
                st.step = label.trim().to_string();
                st.since = Instant::now();
            }
        });
    }

    /// Clears the status line, if one is shown.
    fn clear_status(&mut self) {
        if std::mem::take(&mut self.status_shown) {
            eprint!("\r\x1b[2K");
        }
    }

    /// Draws `event`.
    pub fn event(&mut self, event: atomlab_core::progress::Event<'_>) {
        use atomlab_core::progress::Event;
        match event {
            Event::Begin { total, what } => {
                self.clear_status();
                if let Some(s) = self.steps.take() {
                    s.finish();
                }
                let steps = Steps::new(total, what);
                let bar = steps.bar.clone();
                self.watching(|st| {
                    (st.done, st.total, st.what, st.bar) = (0, total, what, bar);
                    st.begun = Instant::now();
                });
                self.steps = Some(steps);
            }
            Event::Step(label) => {
                self.steps.iter_mut().for_each(|s| s.begin(label));
                self.step_is(label);
            }
            Event::Done(label) => {
                self.steps.iter_mut().for_each(|s| s.done(label));
                self.watching(|st| st.done += 1);
            }
            Event::At { done, label } => {
                self.steps.iter_mut().for_each(|s| s.set(done, label));
                self.watching(|st| st.done = done);
                self.step_is(label);
            }
            Event::End => {
                if let Some(s) = self.steps.take() {
                    s.finish();
                }
                self.watching(|st| st.bar = None);
            }
            Event::Watch {
                live,
                every,
                context,
            } => {
                if let Some(w) = &self.watched {
                    if let Ok(mut st) = w.state.lock() {
                        st.live = Arc::clone(live);
                        st.every = every;
                        st.context = context.to_string();
                    }
                    return;
                }
                let watched = Arc::new(Watched {
                    state: Mutex::new(WatchState {
                        live: Arc::clone(live),
                        every,
                        context: context.to_string(),
                        command: self.command,
                        step: String::new(),
                        since: Instant::now(),
                        done: 0,
                        total: self.steps.as_ref().map_or(0, |s| s.total),
                        what: self.steps.as_ref().map_or("steps", |s| s.what),
                        bar: self.steps.as_ref().and_then(|s| s.bar.clone()),
                        begun: Instant::now(),
                        last_line: Instant::now(),
                        over: false,
                    }),
                });
                // The main thread draws it from now on (`watch`).
                if let Ok(mut slot) = WATCHED.lock() {
                    *slot = Some(Arc::clone(&watched));
                }
                self.watched = Some(watched);
            }
            Event::Part(words) => eprintln!("  {words}"),
            Event::Status(line) if self.tty => {
                // One line, cut to the views' width: a long path must not
                // wrap, or `\r` would clear only its last line.
                let line: String = line.chars().take(100).collect();
                eprint!("\r\x1b[2Katomlab: {line}");
                self.status_shown = true;
            }
            Event::Status(_) => {}
            Event::Note(words) => {
                self.clear_status();
                eprintln!("atomlab: {words}");
            }
        }
    }
}

impl Drop for Reporter {
    /// The work is over (or stopped by an error): its bar and status line
    /// go.
    fn drop(&mut self) {
        // The watcher stops drawing before the bar goes (it holds the lock
        // while it draws).
        self.watching(|st| st.over = true);
        if let Some(s) = self.steps.take() {
            s.finish();
        }
        self.clear_status();
    }
}

/// A run shows its clock from the start when it is expected to take this
/// long or more, and a run of unknown length once it has taken this long.
pub const CLOCK_AFTER: Duration = Duration::from_secs(10);

/// Whether a run's clock is on stderr now: only on a terminal, and only
/// for a run of [`CLOCK_AFTER`] or more (expected, or so far when its
/// length is not known in advance), so that short runs, pipes and tests
/// print nothing.
pub fn clock_shown(terminal: bool, elapsed: Duration, expected: Option<Duration>) -> bool {
    terminal && expected.unwrap_or(elapsed) >= CLOCK_AFTER
}

/// Whole seconds, as the clock shows them (`12 s`).
fn whole(d: Duration) -> String {
    format!("{} s", d.as_secs())
}

/// The clock's line: `what: 12 s of 30 s`, or `what: 12 s` when the length
/// is not known.
pub fn clock_line(what: &str, elapsed: Duration, expected: Option<Duration>) -> String {
    match expected {
        Some(total) => format!("{what}: {} of {}", whole(elapsed.min(total)), whole(total)),
        None => format!("{what}: {}", whole(elapsed)),
    }
}

/// A run's clock on stderr: a bar filling over the expected time (`load`:
/// its warm-up and duration) or a spinner with the seconds so far (`run`),
/// redrawn four times a second by a thread of its own. Nothing when stderr
/// is not a terminal or the run is short ([`clock_shown`]).
pub struct Clock {
    label: Option<mpsc::Sender<String>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Clock {
    /// Starts the clock of a run named `what` (its line's first words,
    /// changed by [`Clock::label`]), expected to take `expected`.
    pub fn start(what: &str, expected: Option<Duration>) -> Clock {
        let terminal = std::io::stderr().is_terminal();
        if !terminal || expected.is_some_and(|e| e < CLOCK_AFTER) {
            return Clock {
                label: None,
                thread: None,
            };
        }
        let (tx, rx) = mpsc::channel::<String>();
        let mut what = what.to_string();
        // A clock the system gives no thread (`ulimit -u`) is not shown.
        let thread = std::thread::Builder::new().spawn(move || {
            let begun = Instant::now();
            let mut bar: Option<ProgressBar> = None;
            loop {
                // The channel is the tick (a timeout), the new label (a
                // message) and the end (the sender dropped) in one.
                match rx.recv_timeout(Duration::from_millis(250)) {
                    Ok(label) => what = label,
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                let elapsed = begun.elapsed();
                if !clock_shown(terminal, elapsed, expected) {
                    continue;
                }
                let b = bar.get_or_insert_with(|| clock_bar(expected));
                if let Some(total) = expected {
                    b.set_position(elapsed.min(total).as_millis() as u64);
                } else {
                    b.tick();
                }
                b.set_message(clock_line(&what, elapsed, expected));
            }
            if let Some(b) = bar {
                b.finish_and_clear();
            }
        });
        match thread {
            Ok(thread) => Clock {
                label: Some(tx),
                thread: Some(thread),
            },
            Err(_) => Clock {
                label: None,
                thread: None,
            },
        }
    }

    /// The run is now at `what` (`run`: the test it is running).
    pub fn label(&self, what: &str) {
        if let Some(tx) = &self.label {
            let _ = tx.send(what.to_string());
        }
    }
}

/// A bar over `expected` (in milliseconds), or a spinner.
fn clock_bar(expected: Option<Duration>) -> ProgressBar {
    let (bar, template) = match expected {
        Some(total) => (
            ProgressBar::with_draw_target(
                Some(total.as_millis() as u64),
                ProgressDrawTarget::stderr(),
            ),
            "{bar:30} {msg}",
        ),
        None => (
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            "{spinner} {msg}",
        ),
    };
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

impl Drop for Clock {
    /// The run is over: the line goes.
    fn drop(&mut self) {
        self.label = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_shows_on_a_terminal_for_runs_of_ten_seconds_or_more() {
        let s = Duration::from_secs;
        // load -d 10: from the start; load -d 5: never.
        assert!(clock_shown(true, s(0), Some(s(10))));
        assert!(!clock_shown(true, s(4), Some(s(9))));
        // run (length unknown): once it has taken ten seconds.
        assert!(!clock_shown(true, Duration::from_millis(9_999), None));
        assert!(clock_shown(true, s(10), None));
        // Never in a pipe (tests, `| tee`).
        assert!(!clock_shown(false, s(60), Some(s(60))));
        assert!(!clock_shown(false, s(60), None));
    }

    #[test]
    fn the_clock_line_says_seconds_so_far_and_of_what() {
        let s = Duration::from_secs;
        assert_eq!(
            clock_line(
                "load http://127.0.0.1:8080/",
                Duration::from_millis(12_700),
                Some(s(31))
            ),
            "load http://127.0.0.1:8080/: 12 s of 31 s"
        );
        assert_eq!(
            clock_line("load x", s(40), Some(s(31))),
            "load x: 31 s of 31 s"
        );
        assert_eq!(clock_line("run SB", s(15), None), "run SB: 15 s");
    }
}
