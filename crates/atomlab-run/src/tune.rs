//! `atomlab run` tunes its own synchronisation, per test, within its
//! budget of runs (issue 38).
//!
//! Which way of starting the threads of an instance together finds a
//! test's relaxed outcomes fastest depends on the machine, the test, and —
//! on a VM — on where the hypervisor happens to place the vCPUs: the same
//! binary's witnesses per second moved by an order of magnitude between
//! batches on one host (BENCHMARKS.md, `run` vs litmus7). litmus7 leaves
//! the choice to its user (`-barrier`, `-st`, `-mem`, `-preload`,
//! `-launch`). Here the runs themselves choose, as a bandit: each setting
//! of [`candidates`] gets one run, then each call of the harness goes to
//! the setting Thompson sampling picks from what the runs so far found
//! (hunted outcomes per second, as gamma beliefs), with older figures fading so
//! that a long test follows a VM that changes under it. When one setting
//! is clearly best it gets nearly every run after a few; when hits are
//! rare, the settings share the runs until the evidence parts them. (The
//! first tuner gave a tenth of the runs to successive halving and the rest
//! to the winner: on tests whose witnesses come a few per thousand
//! instances, one run per setting picked at random, and the same binary's
//! C053 gave 4,300 to 52,000 witnesses per second from one invocation to
//! the next.)
//!
//! Every run of every setting is a run of the test: its final states go
//! into the histogram (a state no model allows is a finding whichever
//! setting showed it), and the settings tried are those whose correctness
//! `tests/hardware_x86.rs` (and the aarch64 and riscv64 ones) check. What
//! was chosen, and each trial's figures, go into the record, so that a
//! result can be repeated with the chosen setting pinned.

use std::time::{Duration, Instant};

use atomlab_litmus::Value;

use crate::{
    Layout, Preload, Program, Roles, RunBarrier, RunError, RunOptions, RunResult, SyncMode,
};

/// The most runs one call of the harness takes once every setting has had
/// one. The calls share one set of threads ([`crate::run_calls`]): a call
/// costs the threads' meeting, not their start (which cost 0.7-1.2 ms a
/// call on the 2-vCPU KVM guest when each call started its own, against
/// 0.5-0.7 ms for a run of SB's 1,000 instances), but each call is a
/// histogram to merge and a draw of the bandit, so calls still grow with
/// the runs done, a quarter of them, from 2 up to this.
pub const MOST_RUNS_A_CALL: usize = 25;

/// Runs of the next call, `done` runs into the test.
fn chunk_after(done: usize) -> usize {
    (done / 4).clamp(2, MOST_RUNS_A_CALL)
}

/// How fast what a setting found is forgotten: its hits and seconds count
/// half after this much of the test's run time, so that a long test
/// follows a VM whose setting changes under it (discounted Thompson
/// sampling: Raj and Kalyani, "Taming non-stationary bandits: a Bayesian
/// approach", 2017). A test of the default size takes a fraction of a
/// second, where nothing is forgotten.
const HALF_LIFE_SECONDS: f64 = 2.0;

/// What the tuner believes of each setting's hits per second: a gamma
/// distribution of shape `hits + 1` and rate `seconds` (the Poisson
/// rate's posterior from one prior hit, so that a setting that found
/// nothing yet is still believed to find about one in the time it ran),
/// over discounted figures ([`HALF_LIFE_SECONDS`]), drawn by
/// [`atomlab_stats::draw`] (Marsaglia and Tsang). Thompson sampling
/// (Thompson, "On the likelihood that one unknown probability exceeds
/// another in view of the evidence of two samples", Biometrika 1933;
/// Chapelle and Li, "An empirical evaluation of Thompson sampling",
/// NeurIPS 2011) runs the setting whose draw is highest: a setting is run
/// as often as it is likely to be the best, so a clear winner gets nearly
/// every run after a few, and close ones share them until the evidence
/// parts them.
struct Bandit {
    hits: Vec<f64>,
    seconds: Vec<f64>,
    rng: atomlab_stats::draw::SplitMix64,
}

impl Bandit {
    fn new(settings: usize, seed: u64) -> Bandit {
        Bandit {
            hits: vec![0.0; settings],
            seconds: vec![0.0; settings],
            // Its own stream: the runs' shuffles keep theirs.
            rng: atomlab_stats::draw::SplitMix64(seed ^ 0x5448_4f4d_5053_4f4e),
        }
    }

    /// Setting `i` found `hits` in `seconds`; everything known before
    /// fades by the time that took.
    fn saw(&mut self, i: usize, hits: f64, seconds: f64) {
        let keep = 0.5f64.powf(seconds.max(0.0) / HALF_LIFE_SECONDS);
        for (h, t) in self.hits.iter_mut().zip(self.seconds.iter_mut()) {
            *h *= keep;
            *t *= keep;
        }
        self.hits[i] += hits;
        self.seconds[i] += seconds.max(1e-9);
    }

    /// The setting to run next: the highest draw of hits per second.
    fn pick(&mut self) -> usize {
        let mut best = (0, f64::NEG_INFINITY);
        for i in 0..self.hits.len() {
            let draw = self.rng.gamma(self.hits[i] + 1.0) / self.seconds[i].max(1e-9);
            if draw > best.1 {
                best = (i, draw);
            }
        }
        best.0
    }
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
    /// `--run-barrier` given.
    pub run_barrier: bool,
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
            && self.run_barrier
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
    /// How the threads meet between runs.
    pub run_barrier: RunBarrier,
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
            run_barrier: opts.run_barrier,
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
            run_barrier: self.run_barrier,
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
        if self.run_barrier != RunBarrier::Futex {
            s.push_str(&format!(" --run-barrier {}", self.run_barrier.name()));
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
        let barrier = match self.run_barrier {
            RunBarrier::Futex => "",
            RunBarrier::Spin => "/spin between runs",
        };
        format!(
            "{sync}/{}/{}/{}{spacing}{barrier}",
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
/// (litmus7's `-memory direct`), a random preload, fixed roles, spacing
/// between a thread's accesses (4 and 16 loads of its own frame), and a
/// spinning barrier between runs.
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
            run_barrier: if pinned.run_barrier {
                b.run_barrier
            } else {
                s.run_barrier
            },
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
    // Threads that spin between runs rather than sleep: on a VM an idle
    // vCPU's wake-up costs up to a millisecond (measured: SB 1.27M
    // witnesses/s against 0.77M tuned with futex, 5 alternating rounds;
    // R and C053 within noise).
    add(Setting {
        run_barrier: RunBarrier::Spin,
        ..b
    });
    out
}

/// One setting's runs: how many, what they found, how long they took.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// The setting.
    pub setting: Setting,
    /// Runs done with it.
    pub runs: usize,
    /// Instances counted.
    pub instances: u64,
    /// Instances that ended in a hunted state ([`Hunt`]).
    pub hits: u64,
    /// Time of those runs ([`crate::Phases::runs`]: a call's start, the
    /// same for every setting, left out).
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
    /// The setting the sampling ran most: the one to pin to repeat the
    /// result.
    pub chosen: Setting,
    /// Every setting tried, in the order of [`candidates`].
    pub trials: Vec<Trial>,
    /// Runs spent on the other settings.
    pub trial_runs: usize,
    /// Times the sampling's pick changed from one call to the next, after
    /// each setting's first run.
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
    a.shared_cpus = a.shared_cpus.or(b.shared_cpus);
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
    a.phases.startup += b.phases.startup;
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
    // Every setting's options and code, for one set of threads that runs
    // them all (the harness lays a setting's memory out at its first call).
    let setting_opts: Vec<RunOptions> = settings.iter().map(|s| s.apply(opts)).collect();
    let plans: Vec<crate::Plan<'_>> = settings
        .iter()
        .zip(&setting_opts)
        .map(|(&s, o)| crate::Plan {
            program: program_of(s),
            opts: o,
        })
        .collect();
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
    let mut call = |calls: &mut crate::Calls<'_, '_>,
                    i: usize,
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
        let r = calls.call(i, runs, seed, timeout)?;
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let t = &mut trials[i];
        t.runs += r.runs_done;
        t.instances += r.instances();
        t.hits += hits(&r, hunt);
        t.seconds += r.phases.runs().as_secs_f64();
        let timed_out = r.timed_out;
        match total {
            Some(a) => merge(a, r),
            None => *total = Some(r),
        }
        Ok(!timed_out)
    };
    // Every setting once, then Thompson sampling: each call goes to the
    // setting whose draw from its belief about its hits per second is
    // highest.
    let mut bandit = Bandit::new(settings.len(), opts.seed);
    let mut warmed = 0;
    let mut last_pick = None;
    let mut switches = 0;
    crate::run_calls(&plans, |calls| {
        while runs_left > 0 {
            let (i, chunk) = if warmed < settings.len() {
                warmed += 1;
                (warmed - 1, 1)
            } else {
                let i = bandit.pick();
                if last_pick.is_some_and(|p| p != i) {
                    switches += 1;
                }
                last_pick = Some(i);
                (i, chunk_after(opts.runs - runs_left).min(runs_left))
            };
            let before = (trials[i].hits, trials[i].seconds);
            let went_on = call(calls, i, chunk, &mut trials, &mut total)?;
            bandit.saw(
                i,
                (trials[i].hits - before.0) as f64,
                trials[i].seconds - before.1,
            );
            runs_left -= chunk;
            if !went_on {
                break;
            }
        }
        Ok(())
    })?;
    // The setting the sampling ran most (the one it believed best most
    // often), the faster of two with as many runs.
    let best = (0..trials.len())
        .max_by(|&a, &b| {
            let (x, y) = (&trials[a], &trials[b]);
            x.runs.cmp(&y.runs).then(x.score().total_cmp(&y.score()))
        })
        .unwrap_or(0);
    let trial_runs = trials
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != best)
        .map(|(_, t)| t.runs)
        .sum();
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

    /// How often each setting is picked in 2,000 draws.
    fn picks(bandit: &mut Bandit) -> Vec<usize> {
        let mut n = vec![0; bandit.hits.len()];
        for _ in 0..2000 {
            n[bandit.pick()] += 1;
        }
        n
    }

    #[test]
    fn a_clear_winner_gets_nearly_every_run() {
        // One run each of a millisecond: 1, 20 and 0 hits.
        let mut b = Bandit::new(3, 1);
        for (i, hits) in [1.0, 20.0, 0.0].into_iter().enumerate() {
            b.saw(i, hits, 0.001);
        }
        let n = picks(&mut b);
        assert!(n[1] > 1900, "{n:?}");
    }

    #[test]
    fn settings_that_find_as_much_share_the_runs() {
        let mut b = Bandit::new(2, 2);
        b.saw(0, 10.0, 0.001);
        b.saw(1, 10.0, 0.001);
        let n = picks(&mut b);
        assert!(n[0] > 600 && n[1] > 600, "{n:?}");
    }

    #[test]
    fn what_was_found_long_ago_counts_less() {
        let mut b = Bandit::new(2, 3);
        b.saw(0, 1000.0, 1.0);
        // Ten seconds of runs of the other setting: five half-lives.
        b.saw(1, 10.0, 10.0);
        assert!((b.hits[0] - 1000.0 / 32.0).abs() < 1e-6, "{:?}", b.hits);
        assert!((b.seconds[0] - 1.0 / 32.0).abs() < 1e-9, "{:?}", b.seconds);
        // Its rate is believed as before, on less evidence.
        assert!(picks(&mut b)[0] > 1900);
    }

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
                run_barrier: true,
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
            shared_cpus: None,
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
