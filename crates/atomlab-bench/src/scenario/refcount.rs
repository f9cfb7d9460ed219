//! `bench refcount`: the LKML comparison of a raw atomic increment with the
//! checked, saturating `refcount_t`, inlined and called, uncontended
//! (`--contention private`) and contended (`shared`).
//!
//! Variants: `atomic-inc` (`atomic_inc`, a `lock inc`/`ldadd`),
//! `atomic-inc-call`, `refcount-inc` (v5.5 `refcount_inc`: fetch_add then
//! checks), `refcount-inc-call`, `refcount-cmpxchg-inc` (v4.11: the
//! compare-exchange loop the thread measured), `refcount-cmpxchg-inc-call`,
//! and get/put pairs (`inc` then `dec_and_test`): `atomic-get-put`,
//! `refcount-get-put`, `refcount-get-put-call`.
//!
//! Users' counts (plugins, `include/atomlab.h`'s `refcount` kind) run as
//! get/put pairs, beside `refcount-get-put`, on an object that keeps one
//! reference of its own, so that no put may say it was the last.
//!
//! Counts start at 1 before every run; a run that saturated a count is an
//! error (the measurement would be of the saturated path), which at the
//! default run lengths needs 2^31 increments and does not happen.

use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_core::Record;
use atomlab_plugin::abi::RefcountFns;
use atomlab_plugin::RefcountVariant;
use atomlab_prims::refcount::{called, RawRefcount, SaturatingRefcount};
use atomlab_prims::CachePadded;

use super::plugged::{variant_records, Objects, Pluggable};
use super::{announce, cell_failed, cell_record, cell_spec, Progress};
use crate::harness::run_cell;
use crate::options::Contention;
use crate::plan::{BenchError, Plan, Scenario};

/// Every refcount variant, in table order.
pub const REFCOUNT_VARIANTS: [&str; 9] = [
    "atomic-inc",
    "atomic-inc-call",
    "refcount-inc",
    "refcount-inc-call",
    "refcount-cmpxchg-inc",
    "refcount-cmpxchg-inc-call",
    "atomic-get-put",
    "refcount-get-put",
    "refcount-get-put-call",
];

/// The scenario.
#[derive(Clone, Copy)]
pub struct Refcount;

impl Scenario for Refcount {
    fn name(&self) -> &'static str {
        "refcount"
    }

    fn plugs(&self) -> Option<&'static dyn crate::plan::Plugs> {
        Some(&crate::scenario::plugged::Door(Refcount))
    }

    fn variants(&self) -> Vec<&'static str> {
        REFCOUNT_VARIANTS.to_vec()
    }

    fn implausible(&self, _plan: &Plan, _serial_ns: f64, ns_per_op: f64) -> Option<String> {
        crate::plausible::thread_rmw_implausible(ns_per_op)
    }

    fn run(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        self.run_with(plan, pmu, progress, &[])
    }
}

/// Users' counts beside the built-in ones ([`super::plugged::WithPlugins`]).
impl Pluggable for Refcount {
    type Fns = RefcountFns;

    /// Runs the refcount cells of `plan`; a variant named by one of `plugins`
    /// is that plugin's.
    fn run_with(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
        plugins: &[RefcountVariant],
    ) -> Result<Vec<Record>, BenchError> {
        let plugin = |p: &RefcountVariant, threads| plugin_cell(plan, p, threads, pmu);
        variant_records(plan, plugins, progress, plugin, |variant, progress| {
            plan.threads
                .iter()
                .map(|&threads| {
                    announce(progress, plan, variant, threads);
                    cell(plan, variant, threads, pmu)
                })
                .collect()
        })
    }

    /// `abi-noop`: a get and a put that do nothing, through the ABI's
    /// pointers.
    fn abi_baseline(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        super::plugged::abi_noop_row(plan, progress, "a get and a put that do nothing", |one| {
            let noop = atomlab_plugin::refcount::abi_noop()
                .map_err(|why| super::cell_failed(one, atomlab_plugin::lock::ABI_NOOP, why))?;
            plugin_cell(one, &noop, 1, pmu)
        })
    }
}

/// A plugin's count, each operation a get then a put (as
/// `refcount-get-put`) on an object that holds one reference of its own
/// from `new_`: a put that says it was the last is a broken count, and the
/// cell's error.
fn plugin_cell(
    plan: &Plan,
    p: &RefcountVariant,
    threads: usize,
    pmu: bool,
) -> Result<Record, BenchError> {
    let objs = Objects::new(plan, &p.name, threads, || p.make())?;
    let said_last = AtomicU64::new(0);
    let out = run_cell(
        &cell_spec(plan, threads, pmu),
        |t| {
            let (o, said_last) = (objs.of(t), &said_last);
            move || {
                o.get();
                if o.put() {
                    // ORDERING: Relaxed: a count, read after the run's
                    // barrier.
                    said_last.fetch_add(1, Ordering::Relaxed);
                }
            }
        },
        || {},
        |_ops| {
            // ORDERING: as above.
            match said_last.swap(0, Ordering::Relaxed) {
                0 => Ok(()),
                k => Err(format!(
                    "put said it dropped the last reference {k} times while the object still held its own: the count is wrong (atomlab stress refcount --plugin shows how)"
                )),
            }
        },
    )
    .map_err(|reason| cell_failed(plan, &p.name, reason))?;
    let mut r = cell_record(plan, &p.name, threads, &out);
    r.notes.push(format!(
        "plugin {}: each operation is a get and a put (as refcount-get-put), through the plugin's function pointers",
        p.name
    ));
    if objs.per_thread() {
        r.notes.push("--contention private: each thread's object comes from the plugin's new_, which may put two on one cache line (allocate 64-byte aligned objects to measure the uncontended cost)".into());
    }
    Ok(r)
}

fn cell(plan: &Plan, variant: &str, threads: usize, pmu: bool) -> Result<Record, BenchError> {
    let n = match plan.contention {
        Contention::Shared => 1,
        Contention::Private => threads,
    };
    let raw: Vec<CachePadded<RawRefcount>> = (0..n)
        .map(|_| CachePadded::new(RawRefcount::new(1)))
        .collect();
    let sat: Vec<CachePadded<SaturatingRefcount>> = (0..n)
        .map(|_| CachePadded::new(SaturatingRefcount::new(1)))
        .collect();
    let idx = |t: usize| if n == 1 { 0 } else { t };
    let spec = cell_spec(plan, threads, pmu);
    let check = |_ops: u64| {
        if sat.iter().any(|s| s.is_saturated()) {
            Err("a refcount saturated during the run: shorten --duration".to_string())
        } else {
            Ok(())
        }
    };
    let out = match variant {
        "atomic-inc" => run_cell(
            &spec,
            |t| {
                let r = &raw[idx(t)];
                move || r.inc()
            },
            || reset_raw(&raw),
            check,
        ),
        "atomic-inc-call" => run_cell(
            &spec,
            |t| {
                let r = &raw[idx(t)];
                move || called::raw_inc(r)
            },
            || reset_raw(&raw),
            check,
        ),
        "refcount-inc" => run_cell(
            &spec,
            |t| {
                let r = &sat[idx(t)];
                move || r.inc()
            },
            || reset_sat(&sat),
            check,
        ),
        "refcount-inc-call" => run_cell(
            &spec,
            |t| {
                let r = &sat[idx(t)];
                move || called::saturating_inc(r)
            },
            || reset_sat(&sat),
            check,
        ),
        "refcount-cmpxchg-inc" => run_cell(
            &spec,
            |t| {
                let r = &sat[idx(t)];
                move || r.inc_cmpxchg()
            },
            || reset_sat(&sat),
            check,
        ),
        "refcount-cmpxchg-inc-call" => run_cell(
            &spec,
            |t| {
                let r = &sat[idx(t)];
                move || called::saturating_inc_cmpxchg(r)
            },
            || reset_sat(&sat),
            check,
        ),
        "atomic-get-put" => run_cell(
            &spec,
            |t| {
                let r = &raw[idx(t)];
                move || {
                    r.inc();
                    std::hint::black_box(r.dec_and_test());
                }
            },
            || reset_raw(&raw),
            check,
        ),
        "refcount-get-put" => run_cell(
            &spec,
            |t| {
                let r = &sat[idx(t)];
                move || {
                    r.inc();
                    std::hint::black_box(r.dec_and_test());
                }
            },
            || reset_sat(&sat),
            check,
        ),
        "refcount-get-put-call" => run_cell(
            &spec,
            |t| {
                let r = &sat[idx(t)];
                move || {
                    called::saturating_inc(r);
                    std::hint::black_box(called::saturating_dec_and_test(r));
                }
            },
            || reset_sat(&sat),
            check,
        ),
        other => Err(format!("unknown refcount variant {other}").into()),
    }
    .map_err(|reason| cell_failed(plan, variant, reason))?;
    Ok(cell_record(plan, variant, threads, &out))
}

fn reset_raw(counts: &[CachePadded<RawRefcount>]) {
    counts.iter().for_each(|c| c.set(1));
}

fn reset_sat(counts: &[CachePadded<SaturatingRefcount>]) {
    counts.iter().for_each(|c| c.set(1));
}
