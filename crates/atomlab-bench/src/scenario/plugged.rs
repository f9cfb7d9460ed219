//! Users' code (plugins, `include/atomlab.h`) beside a scenario's built-in
//! variants: [`WithPlugins`] wraps a scenario that can run a plugin's
//! variants of one kind ([`Pluggable`]: `lock` for lock, `spsc` for spsc,
//! `refcount` for refcount, `op` for counter), adds their names after the
//! built-in ones, and runs each plugin variant's cells in a child process
//! ([`atomlab_plugin::isolate`]), so that a crash, a hang or a failed
//! check (lost updates, lost items) is that cell's record (flagged, FAIL,
//! no figures) and the other variants still run,
//! print and are saved. Records name the plugin file, its SHA-256 and the
//! variant ([`PluginVariant::tag`]).

use atomlab_core::{FlagKind, Record};
use atomlab_plugin::variant::KindFns;
use atomlab_plugin::PluginVariant;

use atomlab_prims::CachePadded;

use super::{announce, cell_failed, Progress};
use crate::options::{Contention, Field};
use crate::plan::{BenchError, Plan, Plugs, Scenario, TableKind};

/// [`Plugs`] for the pluggable scenario `S` (`Some(&Door(Lock))`).
pub struct Door<S>(pub S);

impl<S: Pluggable + Copy + Sync> Plugs for Door<S> {
    fn kind(&self) -> atomlab_plugin::variant::Kind {
        <S::Fns as KindFns>::KIND
    }

    fn load(&self, paths: &[std::path::PathBuf]) -> Result<&'static dyn Scenario, BenchError> {
        let base = self.0;
        let subcommand = format!("bench {}", base.name());
        let plugins = atomlab_plugin::load_kind::<S::Fns>(paths, &subcommand)?;
        let builtin = base.variants();
        let scenario = atomlab_plugin::WithPlugins::new(base, &builtin, plugins)?;
        Ok(Box::leak(Box::new(scenario)))
    }
}

/// A scenario that runs plugin variants of the kind `Fns`.
pub trait Pluggable: Scenario + 'static {
    /// The kind's function pointers (`atomlab_plugin::abi::LockFns`, …).
    type Fns: KindFns;
    /// Runs the cells of `plan`; a variant named by one of `plugins` is
    /// that plugin's.
    fn run_with(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
        plugins: &[PluginVariant<Self::Fns>],
    ) -> Result<Vec<Record>, BenchError>;
    /// Cells that measure what the plugin ABI itself costs here (a no-op
    /// variant called through the same function pointers), run once
    /// beside a run with plugins; none by default.
    fn abi_baseline(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        let _ = (plan, pmu, progress);
        Ok(Vec::new())
    }
    /// The parameters a record of `cell` carries that place it in its
    /// table and match it in `compare`: those of a cell whose child process
    /// gave no record (it crashed or hung).
    fn cell_params(&self, cell: &Plan, r: &mut Record) {
        match cell.threads[..] {
            [t] => r.param("threads", t),
            _ => {
                let threads: Vec<String> = cell.threads.iter().map(|t| t.to_string()).collect();
                r.param("threads", threads.join(","))
            }
        };
        r.param("contention", cell.contention.name());
        if let Some(rate) = cell.rates.first().copied().flatten() {
            r.param("mode", "fixed-rate").param("rate_offered", rate);
        }
    }
}

/// `base` with its plugins' variants after its own (atomlab-plugin's
/// [`atomlab_plugin::WithPlugins`]), a scenario of its own here.
pub type WithPlugins<S> = atomlab_plugin::WithPlugins<S, <S as Pluggable>::Fns>;

impl<S: Pluggable> Scenario for atomlab_plugin::WithPlugins<S, S::Fns> {
    fn name(&self) -> &'static str {
        self.base().name()
    }

    fn variants(&self) -> Vec<&'static str> {
        self.after(self.base().variants())
    }

    fn unavailable(&self, variant: &str) -> Option<String> {
        match self.plugin(variant) {
            Some(_) => None,
            None => self.base().unavailable(variant),
        }
    }

    fn table(&self) -> TableKind {
        self.base().table()
    }

    fn fields(&self) -> &'static [Field] {
        self.base().fields()
    }

    /// A plugin's variant fixes its own orderings: it runs once, not once
    /// per `--ordering`.
    fn variant_takes_orderings(&self, variant: &str) -> bool {
        self.plugin(variant).is_none() && self.base().variant_takes_orderings(variant)
    }

    fn plugs(&self) -> Option<&'static dyn Plugs> {
        self.base().plugs()
    }

    fn splits_threads(&self) -> bool {
        self.base().splits_threads()
    }

    /// What the ABI's calls cost here, in this run, beside the plugins'
    /// figures (they include it; the built-ins do not): once per run, not
    /// once per cell.
    fn baseline(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        if plan.variants.iter().any(|v| self.plugin(v).is_some()) {
            self.base().abi_baseline(plan, pmu, progress)
        } else {
            Ok(Vec::new())
        }
    }

    fn runs_every_rate(&self) -> bool {
        self.base().runs_every_rate()
    }

    fn cells(&self, plan: &Plan) -> usize {
        self.base().cells(plan)
    }

    fn check(&self, plan: &Plan, cpus: usize) -> Result<(), BenchError> {
        self.base().check(plan, cpus)
    }

    fn implausible(&self, plan: &Plan, serial_ns: f64, ns_per_op: f64) -> Option<String> {
        self.base().implausible(plan, serial_ns, ns_per_op)
    }

    /// A plugin's variant runs in a child process (`isolated`), except
    /// in that child.
    fn run(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        if atomlab_plugin::isolate::child_request().is_some() {
            // A plugin cell whose check failed is that cell's FAIL, not the
            // end of the command.
            let out = self.base().run_with(plan, pmu, progress, self.plugins());
            if let Err(BenchError::Sanity {
                variant, reason, ..
            }) = &out
            {
                if let Some(p) = self.plugin(variant) {
                    let why = reason.clone();
                    return Ok(vec![failed(self.base(), plan, p, FlagKind::Incorrect, why)]);
                }
            }
            return out;
        }
        let mut records = Vec::new();
        for v in &plan.variants {
            let mut one = plan.clone();
            one.variants = vec![v.clone()];
            match self.plugin(v) {
                Some(p) => {
                    progress(atomlab_core::progress::Event::Step(&format!(
                        "bench {} {v}: in a child process",
                        self.name()
                    )));
                    records.extend(isolated(self.base(), &one, p)?);
                }
                None => records.extend(self.base().run_with(&one, pmu, progress, &[])?),
            }
        }
        Ok(records)
    }
}

/// The `abi-noop` row of a kind, one thread, beside a flat-out timed run
/// with plugins: `cell` measures the no-op variant in a one-thread copy of
/// `plan`; `what` says what the variant's calls are. None at a fixed
/// rate or in fixed-work mode, whose figures are not per call.
pub(crate) fn abi_noop_row(
    plan: &Plan,
    progress: Progress<'_>,
    what: &str,
    cell: impl FnOnce(&Plan) -> Result<Record, BenchError>,
) -> Result<Vec<Record>, BenchError> {
    if plan.fixed_work.is_some() || plan.rates.first().copied().flatten().is_some() {
        return Ok(Vec::new());
    }
    // One thread: the calls' cost is a thread's own, and a variant that
    // does nothing cannot keep a shared object's count for two.
    let mut one = plan.clone();
    one.threads = vec![1];
    super::announce(progress, &one, atomlab_plugin::lock::ABI_NOOP, 1);
    let mut rec = cell(&one)?;
    rec.param("entry", "abi");
    rec.notes.push(format!(
        "{}: {what}, called through the plugin ABI's function pointers as a plugin's are: what those indirect calls cost here, in this run (a plugin's ns/op includes it, a built-in's does not)",
        atomlab_plugin::lock::ABI_NOOP
    ));
    Ok(vec![rec])
}

/// The records of `plan`'s variants, in order: a variant named by one of
/// `plugins` is that plugin's, a cell per thread count, each announced,
/// run by `plugin_cell` (given the plugin and the thread count) and
/// tagged with the plugin ([`PluginVariant::tag`]); any other is
/// `builtin`'s (given its name and the progress).
pub(crate) fn variant_records<F: KindFns>(
    plan: &Plan,
    plugins: &[PluginVariant<F>],
    progress: Progress<'_>,
    plugin_cell: impl Fn(&PluginVariant<F>, usize) -> Result<Record, BenchError>,
    mut builtin: impl FnMut(&str, Progress<'_>) -> Result<Vec<Record>, BenchError>,
) -> Result<Vec<Record>, BenchError> {
    let mut records = Vec::new();
    for variant in &plan.variants {
        let Some(p) = plugins.iter().find(|p| p.name == *variant) else {
            records.extend(builtin(variant, &mut *progress)?);
            continue;
        };
        for &threads in &plan.threads {
            announce(progress, plan, &p.name, threads);
            let mut r = plugin_cell(p, threads)?;
            p.tag(&mut r);
            records.push(r);
        }
    }
    Ok(records)
}

/// The objects of a plugin that a cell of `threads` threads works on: one
/// shared by every thread, or one per thread with `--contention private`,
/// each on its own cache line.
pub(crate) struct Objects<T>(Vec<CachePadded<T>>);

impl<T> Objects<T> {
    /// Makes the cell's objects with `make`; its failure is the cell's
    /// error, for the variant `name`.
    pub(crate) fn new(
        plan: &Plan,
        name: &str,
        threads: usize,
        make: impl Fn() -> Result<T, String>,
    ) -> Result<Objects<T>, BenchError> {
        let n = match plan.contention {
            Contention::Shared => 1,
            Contention::Private => threads,
        };
        (0..n)
            .map(|_| make().map(CachePadded::new))
            .collect::<Result<_, _>>()
            .map(Objects)
            .map_err(|why| cell_failed(plan, name, why))
    }

    /// The object thread `t` works on.
    pub(crate) fn of(&self, t: usize) -> &T {
        &self.0[if self.0.len() == 1 { 0 } else { t }].0
    }

    /// Every object.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.0.iter().map(|o| &o.0)
    }

    /// Whether each thread has its own.
    pub(crate) fn per_thread(&self) -> bool {
        self.0.len() > 1
    }
}

/// What identifies a cell of a plan among the plan's [`Plan::split_cells`]:
/// the words a child process is given to run that cell.
pub fn cell_key(cell: &Plan) -> String {
    // The way of waiting too: `--wait spin,notify` makes cells that
    // differ in nothing else.
    format!(
        "{}|{:?}|{:?}|{:?}|{}",
        cell.variants.join(","),
        cell.threads,
        cell.rates,
        cell.orderings,
        cell.ring.wait.name()
    )
}

/// Runs `cell` (one plugin variant's) in a child process
/// ([`atomlab_plugin::isolate`]): its records, or one record flagged
/// crashed or hung, without figures, when the child died by a signal or
/// had no result after twice the cell's expected time and 5 s more
/// (fixed work, whose time is not known in advance: 300 s).
fn isolated<S: Pluggable>(
    base: &S,
    cell: &Plan,
    p: &PluginVariant<S::Fns>,
) -> Result<Vec<Record>, BenchError> {
    use atomlab_plugin::isolate::{run_child, signal_words, End};
    let bound = if cell.fixed_work.is_some() {
        std::time::Duration::from_secs(300)
    } else {
        std::time::Duration::from_secs_f64(cell.estimated_seconds() * 2.0 + 5.0)
    };
    let (kind, why) = match run_child(&cell_key(cell), bound) {
        Ok(End::Done(recs, _)) => return Ok(recs),
        Ok(End::Crashed(sig)) => {
            let (name, words, _) = signal_words(sig);
            (
                FlagKind::Crashed,
                format!("{name} ({words}) while running it: {}", p.crash_hint(sig)),
            )
        }
        Ok(End::Hung(s)) => (
            FlagKind::Hung,
            format!(
                "no result for {s} s (the cell should take about {:.1} s): killed",
                cell.estimated_seconds()
            ),
        ),
        // The cell's own result, not the end of the command: the others
        // are still run, printed and saved (exit 1).
        Ok(End::NoRecords(code)) => (FlagKind::Exited, crate::plugin::isolate::exited_words(code)),
        Err(e) => {
            return Err(cell_failed(
                cell,
                &p.name,
                format!("could not start a child process to run it: {e}"),
            ))
        }
    };
    Ok(vec![failed(base, cell, p, kind, why)])
}

/// The record of a plugin's `cell` that gave no figures: FAIL, flagged
/// `kind` with `why`.
fn failed<S: Pluggable>(
    base: &S,
    cell: &Plan,
    p: &PluginVariant<S::Fns>,
    kind: FlagKind,
    why: String,
) -> Record {
    let mut r = Record::new("bench", base.name(), &p.name);
    base.cell_params(cell, &mut r);
    p.tag(&mut r);
    r.verdict = Some(atomlab_core::Verdict::Fail);
    r.flag(kind, None, why);
    r
}
