//! `atomlab run` tunes its own synchronisation, per test, within its
//! budget of runs (issue 38).
//!
//! Which way of starting the threads of an instance together finds a
//! test's relaxed outcomes fastest depends on the machine, the test, and —
//! on a VM — on where the hypervisor happens to place the vCPUs: the same
//! binary's witnesses per second moved by an order of magnitude between
//! batches on one host (BENCHMARKS.md, `run` vs litmus7). litmus7 leaves
//! the choice to its user (`-barrier`, `-st`, `-mem`, `-preload`,
//! `-launch`). Here the runs themselves choose: the first tenth of the
//! budget tries the settings of [`candidates`] by successive halving
//! (Jamieson and Talwalkar, "Non-stochastic Best Arm Identification and
//! Hyperparameter Optimization", AISTATS 2016: every candidate gets a run,
//! the better half gets more, until one is left), scored by relaxed
//! outcomes per second; the rest of the runs use the best, and every
//! [`RECHECK_EVERY`] runs the runner-up gets one run again, taking over if
//! it now scores higher (the setting of the VM may change under a long
//! test).
//!
//! Every run of every setting is a run of the test: its final states go
//! into the histogram (a state no model allows is a finding whichever
//! setting showed it), and the settings tried are those whose correctness
//! `tests/hardware_x86.rs` (and the aarch64 and riscv64 ones) check. What
//! was chosen, and each trial's figures, go into the record, so that a
//! result can be repeated with the chosen setting pinned.

use std::time::{Duration, Instant};

use atomlab_litmus::Value;

use crate::{Layout, Preload, Program, Roles, RunError, RunOptions, RunResult, SyncMode};

/// Every how many runs, after the trials, the runner-up gets one run.
pub const RECHECK_EVERY: usize = 25;

/// The most runs the trials take: a tenth of the budget, and at least one
/// per candidate.
fn trial_budget(runs: usize, candidates: usize) -> usize {
    (runs / 10).max(candidates)
}

/// The dimensions the user pinned on the command line: the tuner varies
/// only the others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pinned {
    /// `--sync` given.
    pub sync: bool,
    /// `--timebase-delay` given.
    pub timebase_delay: bool,
    /// `--layout` (or `--stride`/`--same-line`) given.
    pub layout: bool,
    /// `--preload` given.
    pub preload: bool,
    /// `--roles` given.
    pub roles: bool,
    /// `--spacing` given.
    pub spacing: bool,
}

impl Pinned {
    /// Every dimension pinned: nothing to tune.
    pub fn all(self) -> bool {
        self.sync
            && self.timebase_delay
            && self.layout
            && self.preload
            && self.roles
            && self.spacing
    }
}

/// One way of running the instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// Start synchronisation per instance.
    pub sync: SyncMode,
    /// With timebase: the delay in ticks, `None` adapted run by run.
    pub timebase_delay: Option<u64>,
    /// Instance memory.
    pub layout: Layout,
    /// Frames and preload.
    pub preload: Preload,
    /// Which code each OS thread runs.
    pub roles: Roles,
    /// Loads of the thread's own frame after each access (the program
    /// prepared with [`crate::PrepareOptions::spacing`]).
    pub spacing: u32,
}

impl Setting {
    /// The setting `opts` describes, for code prepared with `spacing`.
    pub fn of(opts: &RunOptions, spacing: u32) -> Setting {
        Setting {
            sync: opts.sync,
            timebase_delay: opts.timebase_delay,
            layout: opts.layout,
            preload: opts.preload,
            roles: opts.roles,
            spacing,
        }
    }

    /// `opts` with this setting.
    pub fn apply(self, opts: &RunOptions) -> RunOptions {
        RunOptions {
            sync: self.sync,
            timebase_delay: self.timebase_delay,
            layout: self.layout,
            preload: self.preload,
            roles: self.roles,
            ..opts.clone()
        }
    }

    /// The flags that pin this setting (`--sync timebase
    /// --timebase-delay 500 --layout blocks --preload none --roles
    /// rotate`).
    pub fn flags(self) -> String {
        let mut s = format!("--sync {}", self.sync.name());
        if self.sync == SyncMode::Timebase {
            match self.timebase_delay {
                Some(d) => s.push_str(&format!(" --timebase-delay {d}")),
                None => s.push_str(" --timebase-delay auto"),
            }
        }
        s.push_str(&format!(
            " --layout {} --preload {} --roles {}",
            self.layout.name(),
            self.preload.name(),
            self.roles.name()
        ));
        if self.spacing > 0 {
            s.push_str(&format!(" --spacing {}", self.spacing));
        }
        s
    }

    /// A short name: `timebase(500)/blocks/none/rotate`.
    pub fn name(self) -> String {
        let sync = match (self.sync, self.timebase_delay) {
            (SyncMode::Timebase, Some(d)) => format!("timebase({d})"),
            (SyncMode::Timebase, None) => "timebase(auto)".to_string(),
            (s, _) => s.name().to_string(),
        };
        let spacing = match self.spacing {
            0 => String::new(),
            n => format!("/spacing {n}"),
        };
        format!(
            "{sync}/{}/{}/{}{spacing}",
            self.layout.name(),
            self.preload.name(),
            self.roles.name()
        )
    }
}

/// The settings the tuner tries, the base (the defaults, or what was
/// given) first; a pinned dimension keeps the base's value. Each varies
/// one or two dimensions that measured side by side with litmus7 helped
/// some tests and hurt others (BENCHMARKS.md, issue 26): the sync modes,
/// a longer timebase delay and an adapted one, the packed layout
/// (litmus7's `-memory direct`), a random preload, fixed roles, and
/// spacing between a thread's accesses (4 and 16 loads of its own frame).
pub fn candidates(base: &RunOptions, spacing: u32, pinned: Pinned) -> Vec<Setting> {
    let b = Setting::of(base, spacing);
    let d = crate::default_timebase_delay();
    let mut out = vec![b];
    let mut add = |s: Setting| {
        let s = Setting {
            sync: if pinned.sync { b.sync } else { s.sync },
            timebase_delay: if pinned.timebase_delay {
                b.timebase_delay
            } else {
                s.timebase_delay
            },
            layout: if pinned.layout { b.layout } else { s.layout },
            preload: if pinned.preload { b.preload } else { s.preload },
            roles: if pinned.roles { b.roles } else { s.roles },
            spacing: if pinned.spacing { b.spacing } else { s.spacing },
        };
        // The delay means something only with timebase: one setting.
        let s = Setting {
            timebase_delay: if s.sync == SyncMode::Timebase {
                s.timebase_delay
            } else {
                b.timebase_delay
            },
            ..s
        };
        if !out.contains(&s) {
            out.push(s);
        }
    };
    let timebase = |delay| Setting {
        sync: SyncMode::Timebase,
        timebase_delay: delay,
        ..b
    };
    add(timebase(Some(d)));
    add(timebase(Some(d * 4)));
    add(timebase(None));
    add(Setting {
        sync: SyncMode::UserFence,
        ..b
    });
    add(Setting {
        sync: SyncMode::Leader,
        ..b
    });
    add(Setting {
        sync: SyncMode::Spin,
        ..b
    });
    add(Setting {
        layout: Layout::Packed,
        ..b
    });
    add(Setting {
        preload: Preload::Random,
        ..b
    });
    add(Setting {
        roles: Roles::Fixed,
        ..b
    });
    add(Setting {
        sync: SyncMode::Leader,
        layout: Layout::Packed,
        ..b
    });
    // Space between a thread's accesses, as a C compiler's stack traffic
    // puts there (litmus7's C tests found 10-100x more witnesses on
    // C053-like tests than atomlab's back-to-back code).
    add(Setting { spacing: 4, ..b });
    add(Setting { spacing: 16, ..b });
    out
}

/// One setting's runs: how many, what they found, how long they took.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// The setting.
    pub setting: Setting,
    /// Runs done with it (trials and re-checks; the main runs are not
    /// counted here).
    pub runs: usize,
    /// Instances counted.
    pub instances: u64,
    /// Instances that ended in a hunted state ([`Hunt`]).
    pub hits: u64,
    /// Wall time of those runs.
    pub seconds: f64,
}

impl Trial {
    /// Hunted outcomes per second, with one added so that settings that
    /// found none are ranked by how fast they run instances.
    pub fn score(&self) -> f64 {
        (self.hits as f64 + 1.0) / self.seconds.max(1e-9)
    }
}

/// What the tuner did for one test.
#[derive(Debug, Clone, PartialEq)]
pub struct Tuning {
    /// What it hunted.
    pub hunted: &'static str,
    /// The setting the runs after the trials used (the last chosen, if a
    /// re-check switched).
    pub chosen: Setting,
    /// Every setting tried, in the order of [`candidates`].
    pub trials: Vec<Trial>,
    /// Runs spent on trials.
    pub trial_runs: usize,
    /// Re-checks that switched the setting.
    pub switches: usize,
}

/// Which final states count as hits: the condition's witnesses when they
/// are relaxed (no sequentially consistent execution ends there), or else
/// any relaxed state.
pub struct Hunt<'a> {
    /// What is hunted, in words, for the record.
    pub what: &'static str,
    /// Whether a final state (in [`RunResult::vars`]' order) is a hit.
    pub hit: &'a dyn Fn(&[Value], bool) -> bool,
}

/// The hits of `r` under `hunt`.
fn hits(r: &RunResult, hunt: &Hunt<'_>) -> u64 {
    r.histogram
        .iter()
        .filter(|(s, _, witness)| (hunt.hit)(s, *witness))
        .map(|(_, n, _)| n)
        .sum()
}

/// Adds `b`'s runs to `a`'s.
fn merge(a: &mut RunResult, b: RunResult) {
    for (state, n, w) in b.histogram {
        match a.histogram.binary_search_by(|(s, _, _)| s.cmp(&state)) {
            Ok(i) => a.histogram[i].1 += n,
            Err(i) => a.histogram.insert(i, (state, n, w)),
        }
    }
    a.positive += b.positive;
    a.negative += b.negative;
    a.filtered += b.filtered;
    a.budget_exhausted += b.budget_exhausted;
    a.runs_done += b.runs_done;
    a.elapsed += b.elapsed;
    a.timed_out |= b.timed_out;
    a.cpus = b.cpus;
    for e in b.pin_errors {
        if !a.pin_errors.contains(&e) {
            a.pin_errors.push(e);
        }
    }
    a.phases.init += b.phases.init;
    a.phases.barriers += b.phases.barriers;
    a.phases.preload += b.phases.preload;
    a.phases.instances += b.phases.instances;
    a.phases.collect += b.phases.collect;
}

/// Runs `program` `opts.runs` times, choosing the setting as the module
/// says; `pinned` dimensions keep `opts`' value. `programs` holds the
/// test's code as prepared (first) and with each other spacing tried. With everything pinned,
/// or a budget too small to try anything (fewer runs than two per
/// candidate), the runs use `opts` as given and no tuning is returned.
pub fn run_tuned(
    programs: &[(u32, &Program)],
    opts: &RunOptions,
    pinned: Pinned,
    hunt: &Hunt<'_>,
) -> Result<(RunResult, Option<Tuning>), RunError> {
    let (spacing, program) = programs[0];
    // A spacing whose program could not be prepared is not tried.
    let settings: Vec<Setting> = candidates(opts, spacing, pinned)
        .into_iter()
        .filter(|s| programs.iter().any(|(n, _)| *n == s.spacing))
        .collect();
    if pinned.all() || settings.len() < 2 || opts.runs < 2 * settings.len() {
        return crate::run(program, opts).map(|r| (r, None));
    }
    let program_of = |s: Setting| {
        programs
            .iter()
            .find(|(n, _)| *n == s.spacing)
            .map(|(_, p)| *p)
            .unwrap_or(program)
    };
    let start = Instant::now();
    let deadline = opts.timeout.map(|t| start + t);
    let mut seed = opts.seed;
    let mut total: Option<RunResult> = None;
    let mut trials: Vec<Trial> = settings
        .iter()
        .map(|&setting| Trial {
            setting,
            runs: 0,
            instances: 0,
            hits: 0,
            seconds: 0.0,
        })
        .collect();
    let mut runs_left = opts.runs;
    // One call of the harness: `runs` runs of trial `i`'s setting, added
    // to its figures and to the total. Each call has a seed of its own
    // (the shuffles differ) and the time left of the test's timeout.
    let mut call = |i: usize,
                    runs: usize,
                    trials: &mut Vec<Trial>,
                    total: &mut Option<RunResult>|
     -> Result<bool, RunError> {
        let timeout = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if left > Duration::ZERO => Some(left),
                _ => {
                    // The deadline passed between two calls: the runs
                    // left are cut by the timeout as surely as if a call
                    // had seen it (a TIMEOUT, not a PASS of fewer runs).
                    if let Some(t) = total.as_mut() {
                        t.timed_out = true;
                    }
                    return Ok(false);
                }
            },
            None => None,
        };
        let o = RunOptions {
            runs,
            seed,
            timeout,
            ..trials[i].setting.apply(opts)
        };
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let r = crate::run(program_of(trials[i].setting), &o)?;
        let t = &mut trials[i];
        t.runs += r.runs_done;
        t.instances += r.instances();
        t.hits += hits(&r, hunt);
        t.seconds += r.elapsed.as_secs_f64();
        let timed_out = r.timed_out;
        match total {
            Some(a) => merge(a, r),
            None => *total = Some(r),
        }
        Ok(!timed_out)
    };
    // Successive halving over the trial budget.
    let budget = trial_budget(opts.runs, settings.len());
    let mut alive: Vec<usize> = (0..settings.len()).collect();
    let mut spent = 0;
    let mut per = 1;
    'halving: while alive.len() > 1 && spent + alive.len() * per <= budget {
        for &i in &alive {
            if !call(i, per, &mut trials, &mut total)? {
                break 'halving;
            }
            spent += per;
        }
        alive.sort_by(|&a, &b| trials[b].score().total_cmp(&trials[a].score()));
        alive.truncate(alive.len().div_ceil(2));
        per *= 2;
    }
    let trial_runs = spent;
    runs_left = runs_left.saturating_sub(spent);
    let ranked = |trials: &[Trial]| {
        let mut order: Vec<usize> = (0..trials.len()).filter(|&i| trials[i].runs > 0).collect();
        order.sort_by(|&a, &b| trials[b].score().total_cmp(&trials[a].score()));
        order
    };
    let order = ranked(&trials);
    let mut best = order.first().copied().unwrap_or(0);
    let mut switches = 0;
    // The rest of the budget on the best, the runner-up re-checked now
    // and then.
    while runs_left > 0 {
        let chunk = runs_left.min(RECHECK_EVERY);
        if !call(best, chunk, &mut trials, &mut total)? {
            break;
        }
        runs_left -= chunk;
        if runs_left == 0 {
            break;
        }
        let order = ranked(&trials);
        if let Some(&second) = order.iter().find(|&&i| i != best) {
            if !call(second, 1, &mut trials, &mut total)? {
                break;
            }
            runs_left -= 1;
            if trials[second].score() > trials[best].score() {
                best = second;
                switches += 1;
            }
        }
    }
    let total = match total {
        Some(t) => t,
        // The deadline passed before the first call.
        None => return crate::run(program, opts).map(|r| (r, None)),
    };
    Ok((
        total,
        Some(Tuning {
            hunted: hunt.what,
            chosen: trials[best].setting,
            trials,
            trial_runs,
            switches,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_keep_what_is_pinned_and_start_with_the_base() {
        let base = RunOptions::default();
        let all = candidates(&base, 0, Pinned::default());
        assert_eq!(all[0], Setting::of(&base, 0));
        assert!(all.len() >= 8, "{all:?}");
        // No duplicates: each setting is tried once.
        for (i, a) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(a), "{a:?} twice");
        }
        let pinned = Pinned {
            sync: true,
            timebase_delay: true,
            ..Pinned::default()
        };
        let some = candidates(&base, 0, pinned);
        assert!(some
            .iter()
            .all(|s| s.sync == base.sync && s.timebase_delay == base.timebase_delay));
        assert!(some.iter().any(|s| s.layout == Layout::Packed));
        assert!(some.iter().any(|s| s.spacing > 0));
        let none = candidates(
            &base,
            0,
            Pinned {
                sync: true,
                timebase_delay: true,
                layout: true,
                preload: true,
                roles: true,
                spacing: true,
            },
        );
        assert_eq!(none, vec![Setting::of(&base, 0)]);
    }

    #[test]
    fn a_setting_prints_the_flags_that_pin_it() {
        let s = Setting::of(&RunOptions::default(), 0);
        let d = crate::default_timebase_delay();
        assert_eq!(
            s.flags(),
            format!("--sync timebase --timebase-delay {d} --layout blocks --preload none --roles rotate")
        );
        let leader = Setting {
            sync: SyncMode::Leader,
            ..s
        };
        assert_eq!(
            leader.flags(),
            "--sync leader --layout blocks --preload none --roles rotate"
        );
        assert_eq!(leader.name(), "leader/blocks/none/rotate");
        let spaced = Setting {
            spacing: 4,
            ..leader
        };
        assert_eq!(
            spaced.flags(),
            "--sync leader --layout blocks --preload none --roles rotate --spacing 4"
        );
        assert_eq!(spaced.name(), "leader/blocks/none/rotate/spacing 4");
    }

    #[test]
    fn merged_runs_add_up_state_by_state() {
        let r = |hist: Vec<(Vec<Value>, u64, bool)>| RunResult {
            vars: Vec::new(),
            positive: hist.iter().filter(|h| h.2).map(|h| h.1).sum(),
            negative: hist.iter().filter(|h| !h.2).map(|h| h.1).sum(),
            histogram: hist,
            filtered: 0,
            budget_exhausted: 0,
            runs_done: 1,
            elapsed: Duration::from_millis(10),
            timed_out: false,
            cpus: Vec::new(),
            pin_errors: Vec::new(),
            phases: Default::default(),
        };
        let v = |x: i64| vec![Value::Int(x)];
        let mut a = r(vec![(v(0), 5, true), (v(2), 1, false)]);
        merge(&mut a, r(vec![(v(0), 2, true), (v(1), 3, false)]));
        assert_eq!(
            a.histogram,
            vec![(v(0), 7, true), (v(1), 3, false), (v(2), 1, false)]
        );
        assert_eq!((a.positive, a.negative, a.runs_done), (7, 4, 2));
        assert_eq!(a.elapsed, Duration::from_millis(20));
    }
}
