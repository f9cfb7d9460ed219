//! The workers: test files handed out one at a time to `jobs` threads (the
//! calling one among them), each test judged under every model with its
//! own deadline.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use atomlab_litmus::ParseError;
use atomlab_model::{CheckOptions, ModelChoice, SearchProgress};

use atomlab_core::progress::{Event, Live, Sink};

use crate::{Checked, Explored, Options, WATCH_EVERY};

/// Parses and judges each of `files` under `choices`, in parallel; the
/// results in the order of `files`.
pub(crate) fn judge(
    files: &[PathBuf],
    choices: &[ModelChoice<'_>],
    opts: &Options,
    progress: Sink<'_>,
) -> Vec<Result<Checked, ParseError>> {
    let searched = Arc::new(SearchProgress::default());
    let check = CheckOptions {
        deadline: None,
        progress: Some(searched.clone()),
        explain: opts.explain,
        graphs: opts.graphs.is_some(),
        acquire: opts.acquire,
        engine: opts.engine,
        unpruned: false,
        // Litmus tests keep the step bound for their loops.
        loops: None,
        // check lists every final state, as herd7 does.
        stop_at_first: false,
        // herd7 counts and explains every execution, threads named.
        symmetry: false,
        // Prefixes are probed where many combinations of runs remain.
        probe_all: false,
        // u64 words where an execution fits them, u32 where it fits those
        // and every model takes them (atomlab-model's rel.rs).
        wide_words: false,
        no_narrow_words: false,
        // Under LKMM, where the combinations of runs are many and every
        // allowed execution's po ∪ rf is acyclic, they are found by
        // growing graphs (atomlab-model's grow.rs), as verify's are: the
        // lock chains and seqlocks of issue 37 (SEQLOCK-4: 56-67 s to under
        // a second). Elsewhere the product is searched, as before (see
        // `Grow::WhereFlagged` for why).
        grow: atomlab_model::Grow::WhereFlagged,
        grow_all: false,
    };
    let jobs = opts
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .clamp(1, 256);
    let results: Vec<Mutex<Option<Result<Checked, ParseError>>>> =
        files.iter().map(|_| Mutex::new(None)).collect();
    // ORDERING: the counter only hands out distinct indices; the results are
    // published by the Mutexes and the scope's join, so Relaxed suffices.
    let next = AtomicUsize::new(0);
    progress(Event::Begin {
        total: files.len(),
        what: "tests",
    });
    let live: Arc<dyn Live> = Arc::new(Explored(Arc::clone(&searched)));
    progress(Event::Watch {
        live: &live,
        every: WATCH_EVERY,
        context: "",
    });
    // The workers tell the sink one at a time, with the count of tests
    // done (refused ones too) that the bar shows.
    let told = Mutex::new((progress, 0usize));
    let tell = |started: Option<&str>, ended: &str| {
        if let Ok(mut t) = told.lock() {
            let (sink, done) = &mut *t;
            match started {
                Some(name) => sink(Event::At {
                    done: *done,
                    label: name,
                }),
                None => {
                    *done += 1;
                    sink(Event::Done(ended));
                }
            }
        }
    };
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(path) = files.get(i) else { break };
        let outcome = atomlab_litmus::parse_file(path).map(|test| {
            tell(Some(&test.name), "");
            let start = Instant::now();
            let mut o = check.clone();
            o.deadline = opts.timeout.map(|t| start + t);
            let outcomes = atomlab_model::check_test_with(&test, choices, &o);
            // The printers read a judged test's names, registers and
            // condition, not its code (explanations and graphs aside): a
            // batch keeps thousands, and their code was a third of the
            // memory each kept (a page fault every few tests).
            let mut test = test;
            if !o.explain && !o.graphs {
                for t in &mut test.threads {
                    t.code = Vec::new();
                }
            }
            Checked {
                test,
                outcomes,
                elapsed: start.elapsed(),
            }
        });
        let name = match &outcome {
            Ok(c) => c.test.name.clone(),
            Err(e) => e.file.clone(),
        };
        if let Ok(mut slot) = results[i].lock() {
            *slot = Some(outcome);
        }
        tell(None, &name);
    };
    std::thread::scope(|s| {
        // The calling thread is one of the workers: with `jobs` 1 no test
        // waits for a thread to start (about 0.15 ms each time on a 2-core VM).
        // The workers wait for no one: when the system refuses one
        // (`ulimit -u`), those started, and this one, do the work.
        for _ in 1..jobs.min(files.len().max(1)) {
            if std::thread::Builder::new().spawn_scoped(s, work).is_err() {
                break;
            }
        }
        work();
    });
    if let Ok((sink, _)) = told.into_inner() {
        sink(Event::End);
    }
    results
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}
