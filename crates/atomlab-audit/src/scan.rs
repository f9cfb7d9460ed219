//! From the per-architecture scanners' raw findings ([`crate::found`]) to a
//! [`BinaryAudit`]: outline calls resolved against helpers and PLT stubs,
//! LL/SC loops, attribution to functions, counts and the verdict.

use std::collections::{BTreeMap, HashMap};

use crate::elf::Image;
use crate::found::Scan;
use crate::model::{
    Arch, BinaryAudit, BinaryVerdict, BinaryVerdictKind, Class, FunctionTally, Helper, LseDispatch,
};

/// Function starts, sorted, with names where the binary has them (`None`:
/// an FDE's, named by its address when shown). The names are borrowed:
/// most functions have no atomics, and a stripped library has 10^5 FDEs.
struct Functions<'a> {
    starts: Vec<(u64, Option<&'a str>, &'static str)>,
}

impl<'a> Functions<'a> {
    fn new(image: &'a Image<'_>, helpers: &'a [Helper]) -> Functions<'a> {
        let mut starts: Vec<(u64, Option<&'a str>, &'static str)> = Vec::new();
        for s in &image.symbols {
            starts.push((s.addr, Some(&s.name), "symbol"));
        }
        for h in helpers {
            starts.push((h.addr, Some(&h.name), "helper-shape"));
        }
        for f in &image.go_funcs {
            starts.push((f.addr, Some(&f.name), "gopclntab"));
        }
        for &a in &image.fde_starts {
            starts.push((a, None, "eh_frame"));
        }
        if image.entry != 0 {
            starts.push((image.entry, Some("_start"), "entry"));
        }
        // Symbols first among equal addresses, so their names win.
        let rank = |how: &str| match how {
            "symbol" => 0,
            "helper-shape" => 1,
            "gopclntab" => 2,
            "entry" => 3,
            _ => 4,
        };
        starts.sort_by(|a, b| a.0.cmp(&b.0).then(rank(a.2).cmp(&rank(b.2))));
        starts.dedup_by_key(|s| s.0);
        Functions { starts }
    }

    fn containing(&self, addr: u64) -> Option<usize> {
        self.starts.partition_point(|s| s.0 <= addr).checked_sub(1)
    }

    /// The name of the `i`-th function.
    fn name(&self, i: usize) -> String {
        match self.starts[i] {
            (_, Some(name), _) => name.to_string(),
            (start, None, _) => format!("fn@{start:#x}"),
        }
    }
}

/// libatomic's entry points (`__atomic_fetch_add_4`, `__atomic_load_16`…).
fn is_libatomic(name: &str) -> bool {
    name.starts_with("__atomic_") && name != "__atomic_is_lock_free"
}

/// The start of the symbol containing `addr` (or `addr` itself).
fn function_start(image: &Image<'_>, addr: u64) -> u64 {
    let i = image.symbols.partition_point(|s| s.addr <= addr);
    if i > 0
        && addr
            < image.symbols[i - 1]
                .addr
                .saturating_add(image.symbols[i - 1].size)
    {
        image.symbols[i - 1].addr
    } else {
        addr
    }
}

/// Builds the audit of one binary.
pub(crate) fn finish(path: &str, image: &Image<'_>, scan: Scan) -> BinaryAudit {
    let helpers = scan.helpers;
    let in_helper = |addr: u64| -> bool {
        let i = helpers.partition_point(|h| h.addr <= addr);
        i > 0 && addr < helpers[i - 1].end
    };

    let mut by_mnemonic: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_class: BTreeMap<Class, u64> = BTreeMap::new();
    let mut in_helpers: BTreeMap<Class, u64> = BTreeMap::new();
    // Sites counted for the program itself (outside helpers), for attribution.
    let mut program: Vec<(u64, Class)> = Vec::new();

    let mut outside: BTreeMap<Class, u64> = BTreeMap::new();
    for site in &scan.sites {
        *by_mnemonic.entry(site.mnemonic.clone()).or_default() += 1;
        if !image.in_known_function(site.addr) && !in_helper(site.addr) {
            // Outside every FDE and sized symbol: most likely a constant
            // table in .text (OpenSSL's precomputed points) that decodes as
            // instructions. objdump shows it too; the verdict must not.
            *outside.entry(site.class).or_default() += 1;
        } else if in_helper(site.addr) {
            *in_helpers.entry(site.class).or_default() += 1;
        } else {
            *by_class.entry(site.class).or_default() += 1;
            program.push((site.addr, site.class));
        }
    }
    let mut loops: BTreeMap<String, u64> = BTreeMap::new();
    for lp in &scan.loops {
        let pair = format!(
            "{}/{}",
            scan.sites[lp.ll].mnemonic, scan.sites[lp.sc].mnemonic
        );
        if in_helper(lp.start) {
            *in_helpers.entry(Class::LlscLoop).or_default() += 1;
        } else {
            *by_class.entry(Class::LlscLoop).or_default() += 1;
            *loops.entry(pair).or_default() += 1;
            program.push((lp.start, Class::LlscLoop));
        }
    }

    let helper_at: HashMap<u64, &str> = helpers
        .iter()
        .map(|h| (h.addr, h.name.as_str()))
        .chain(
            scan.plt
                .iter()
                .filter(|(_, n)| crate::aarch64::parse_helper_name(n).is_some())
                .map(|(a, n)| (*a, n.as_str())),
        )
        .collect();
    // libatomic's entry points, through the PLT or linked in statically.
    let libatomic_at: HashMap<u64, &str> = scan
        .plt
        .iter()
        .map(|(a, n)| (*a, n.as_str()))
        .chain(image.symbols.iter().map(|s| (s.addr, s.name.as_str())))
        .filter(|(_, n)| is_libatomic(n))
        .collect();
    let mut outline_calls: BTreeMap<String, u64> = BTreeMap::new();
    let mut libatomic_calls: BTreeMap<String, u64> = BTreeMap::new();
    let mut call_sites = 0u64;
    let mut libatomic_sites = 0u64;
    for call in &scan.calls {
        if in_helper(call.addr) {
            continue;
        }
        if let Some(name) = helper_at.get(&call.target) {
            *outline_calls.entry((*name).to_string()).or_default() += 1;
            call_sites += 1;
            program.push((call.addr, Class::OutlineCall));
        } else if let Some(name) = libatomic_at.get(&call.target) {
            // libatomic calling itself is not the program's doing.
            if libatomic_at.contains_key(&function_start(image, call.addr)) {
                continue;
            }
            *libatomic_calls.entry((*name).to_string()).or_default() += 1;
            libatomic_sites += 1;
            program.push((call.addr, Class::LibatomicCall));
        }
    }
    if libatomic_sites > 0 {
        by_class.insert(Class::LibatomicCall, libatomic_sites);
    }
    if call_sites > 0 {
        by_class.insert(Class::OutlineCall, call_sites);
    }
    if !helpers.is_empty() {
        by_class.insert(Class::OutlineHelper, helpers.len() as u64);
    }

    let functions = Functions::new(image, &helpers);

    // Which LSE instructions are chosen at run time (aarch64).
    let mut lse_dispatch = LseDispatch::default();
    let dispatch = if image.arch == Arch::Aarch64 {
        let lse: Vec<u64> = program
            .iter()
            .filter(|(_, c)| *c == Class::Lse)
            .map(|(a, _)| *a)
            .collect();
        let starts: Vec<u64> = functions.starts.iter().map(|s| s.0).collect();
        let mut lls: Vec<u64> = scan
            .sites
            .iter()
            .filter(|s| s.class == Class::LoadExclusive)
            .map(|s| s.addr)
            .collect();
        lls.sort_unstable();
        let d = crate::dispatch::analyse(image, &lse, &starts, &lls, &scan.plt);
        for a in &lse {
            match d.guarded.get(a) {
                Some(e) => {
                    lse_dispatch.chosen_at_run_time += 1;
                    *lse_dispatch.evidence.entry(*e).or_default() += 1;
                }
                None => lse_dispatch.unconditional += 1,
            }
        }
        for (a, c) in &program {
            if d.fallback_ll.contains(a) {
                match c {
                    Class::LlscLoop => lse_dispatch.llsc_fallback_loops += 1,
                    Class::LoadExclusive => lse_dispatch.fallback_exclusives += 1,
                    _ => {}
                }
            }
        }
        Some(d)
    } else {
        None
    };

    let mut tallies: HashMap<usize, FunctionTally> = HashMap::new();
    for (addr, class) in &program {
        let Some(i) = functions.containing(*addr) else {
            continue;
        };
        let (start, _, found_by) = functions.starts[i];
        let t = tallies.entry(i).or_insert_with(|| FunctionTally {
            addr: start,
            name: functions.name(i),
            found_by,
            atomics: 0,
            by_class: BTreeMap::new(),
            lse_unconditional: 0,
            lse_evidence: Vec::new(),
            llsc_fallbacks: 0,
        });
        if *class == Class::LlscLoop
            && dispatch
                .as_ref()
                .is_some_and(|d| d.fallback_ll.contains(addr))
        {
            t.llsc_fallbacks += 1;
        }
        *t.by_class.entry(*class).or_default() += 1;
        if *class == Class::Lse {
            match dispatch.as_ref().and_then(|d| d.guarded.get(addr)) {
                Some(e) if !t.lse_evidence.contains(e) => {
                    t.lse_evidence.push(*e);
                    t.lse_evidence.sort_unstable();
                }
                Some(_) => {}
                None => t.lse_unconditional += 1,
            }
        }
        if class.is_rmw() {
            t.atomics += 1;
        }
    }
    let mut functions_list: Vec<FunctionTally> = tallies.into_values().collect();
    functions_list.sort_by(|a, b| {
        b.atomics
            .cmp(&a.atomics)
            .then_with(|| {
                let sa: u64 = a.by_class.values().sum();
                let sb: u64 = b.by_class.values().sum();
                sb.cmp(&sa)
            })
            .then(a.addr.cmp(&b.addr))
    });

    let mut notes = image.notes.clone();
    if scan.undecodable > 0 {
        notes.push(format!(
            "{} words in executable sections did not decode as instructions (data in code, or padding)",
            scan.undecodable
        ));
    }
    let n_outside: u64 = outside.values().sum();
    if n_outside > 0 {
        notes.push(format!(
            "{n_outside} atomic-looking words lie outside every known function (likely data in .text); counted under outside_functions, not in the verdict"
        ));
    }
    if !image.has_symtab {
        notes.push(format!(
            "stripped: functions found from .dynsym, .eh_frame, .gopclntab and helper shapes ({} known)",
            functions.starts.len()
        ));
    }

    if image.ifuncs > 0 && image.arch == Arch::Aarch64 && by_class.contains_key(&Class::Lse) {
        notes.push(format!(
            "{} GNU ifuncs: implementations are picked at load time; LSE in an implementation a resolver chooses by a test counts as chosen at run time (evidence: ifunc)",
            image.ifuncs
        ));
    }
    if lse_dispatch.chosen_at_run_time > 0 {
        notes.push(format!(
            "LSE chosen at run time, by evidence: {}; {} LL/SC fallback loops",
            lse_dispatch.evidence_list(),
            lse_dispatch.llsc_fallback_loops
        ));
    }
    if functions.starts.len() <= 1
        && lse_dispatch.chosen_at_run_time + lse_dispatch.unconditional > 0
    {
        notes.push(
            "no function boundaries in the file (no symbols, .eh_frame or .gopclntab): each LSE instruction was judged on its own".into(),
        );
    }
    let functions_known = functions.starts.len() as u64;
    let mut audit = BinaryAudit {
        path: path.to_string(),
        arch: image.arch,
        code_bytes: image.code.iter().map(|r| r.bytes.len() as u64).sum(),
        has_symtab: image.has_symtab,
        verdict: BinaryVerdict {
            kind: BinaryVerdictKind::NoAtomics,
            words: String::new(),
        },
        by_class,
        in_helpers,
        outside_functions: outside,
        by_mnemonic,
        helpers,
        outline_calls,
        libatomic_calls,
        llsc_loops: loops,
        lse_dispatch,
        functions: functions_list,
        functions_known,
        notes,
    };
    audit.verdict = verdict(&audit);
    audit
}

/// Functions with a store-exclusive that is not an LSE choice's fallback.
fn functions_with_inline_llsc(audit: &BinaryAudit) -> usize {
    audit
        .functions
        .iter()
        .filter(|f| f.by_class.get(&Class::StoreExclusive).copied().unwrap_or(0) > f.llsc_fallbacks)
        .count()
}

fn functions_with_unconditional_lse(audit: &BinaryAudit) -> usize {
    audit
        .functions
        .iter()
        .filter(|f| f.lse_unconditional > 0)
        .count()
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

fn libatomic_part(n: u64) -> String {
    format!(
        "{} (it picks its implementation at run time)",
        plural(n, "call to libatomic", "calls to libatomic")
    )
}

fn and_libatomic(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!("; and {}", libatomic_part(n))
    }
}

fn libatomic_only(n: u64) -> BinaryVerdict {
    BinaryVerdict {
        kind: BinaryVerdictKind::LibatomicOnly,
        words: format!("libatomic only: {}", libatomic_part(n)),
    }
}

/// The verdict in the words of issue 5.
pub(crate) fn verdict(audit: &BinaryAudit) -> BinaryVerdict {
    let c = |k| audit.count(k);
    let v = |kind, words: String| BinaryVerdict { kind, words };
    match audit.arch {
        Arch::Aarch64 => {
            let d = &audit.lse_dispatch;
            // Only LSE with no CPU-feature test before it can SIGILL on
            // ARMv8.0; LL/SC loops on the other side of such a test run only
            // there, like the outline helpers' LL/SC halves.
            let lse = d.unconditional;
            let runtime_lse = d.chosen_at_run_time;
            // Exclusives that did not close into a recognised loop still make
            // the code LL/SC.
            let llsc = c(Class::LlscLoop)
                .max(c(Class::StoreExclusive))
                .saturating_sub(d.llsc_fallback_loops);
            let libatomic = c(Class::LibatomicCall);
            let outline = c(Class::OutlineCall) + c(Class::OutlineHelper);
            if lse + runtime_lse + llsc + outline == 0 && libatomic > 0 {
                return libatomic_only(libatomic);
            }
            let runtime_part = |chosen: &str| {
                let evidence: Vec<String> = d
                    .evidence
                    .iter()
                    .map(|(e, n)| format!("{n} {} [{}]", e.words(), e.name()))
                    .collect();
                format!(
                    "{}{chosen}: {}",
                    plural(runtime_lse, "LSE instruction", "LSE instructions"),
                    evidence.join(", ")
                )
            };
            let has_boundaries = audit.functions_known > 1;
            let lse_part = |why: bool| {
                let n = functions_with_unconditional_lse(audit) as u64;
                let place = if has_boundaries {
                    format!("in {}", plural(n, "function", "functions"))
                } else {
                    "(no function boundaries in the file)".to_string()
                };
                format!(
                    "{} {place} behind no CPU-feature test{}",
                    plural(lse, "inline LSE instruction", "inline LSE instructions"),
                    if why {
                        " (needs ARMv8.1, SIGILL on ARMv8.0)"
                    } else {
                        ""
                    }
                )
            };
            match (lse > 0, llsc > 0, outline + libatomic + runtime_lse > 0) {
                (false, false, false) => v(BinaryVerdictKind::NoAtomics, "no atomics".into()),
                (false, false, true) if runtime_lse == 0 => v(
                    BinaryVerdictKind::OutlineAtomics,
                    "outline atomics: LSE chosen at run time (ARMv8.0-safe)".into(),
                ),
                (false, false, true) => {
                    let mut parts = vec![runtime_part("")];
                    if d.llsc_fallback_loops > 0 {
                        parts.push(plural(
                            d.llsc_fallback_loops,
                            "LL/SC fallback loop",
                            "LL/SC fallback loops",
                        ));
                    }
                    if outline > 0 {
                        parts.push(plural(
                            c(Class::OutlineCall),
                            "outline call",
                            "outline calls",
                        ));
                    }
                    if libatomic > 0 {
                        parts.push(libatomic_part(libatomic));
                    }
                    v(
                        BinaryVerdictKind::RuntimeLse,
                        format!(
                            "LSE chosen at run time (ARMv8.0-safe): {}",
                            parts.join("; ")
                        ),
                    )
                }
                (true, false, false) => v(
                    BinaryVerdictKind::InlineLse,
                    format!(
                        "inline LSE: needs ARMv8.1 (SIGILL on ARMv8.0): {}",
                        lse_part(false)
                    ),
                ),
                (false, true, false) => v(
                    BinaryVerdictKind::LlscOnly,
                    "LL/SC only: ARMv8.0 code, slow under contention on large Arm servers".into(),
                ),
                _ => {
                    let mut parts = Vec::new();
                    if libatomic > 0 {
                        parts.push(libatomic_part(libatomic));
                    }
                    if outline > 0 {
                        parts.push(format!(
                            "{} to {} (LSE chosen at run time)",
                            plural(c(Class::OutlineCall), "outline call", "outline calls"),
                            plural(c(Class::OutlineHelper), "helper", "helpers"),
                        ));
                    }
                    if runtime_lse > 0 {
                        parts.push(format!(
                            "{} (ARMv8.0-safe)",
                            runtime_part(" chosen at run time")
                        ));
                    }
                    if lse > 0 {
                        parts.push(lse_part(true));
                    }
                    if llsc > 0 {
                        let place = if has_boundaries {
                            format!(
                                " in {}",
                                plural(
                                    functions_with_inline_llsc(audit) as u64,
                                    "function",
                                    "functions"
                                )
                            )
                        } else {
                            String::new()
                        };
                        parts.push(format!(
                            "{}{place} (LL/SC even on ARMv8.1+)",
                            plural(llsc, "inline LL/SC loop", "inline LL/SC loops"),
                        ));
                    }
                    v(
                        BinaryVerdictKind::Mixed,
                        format!("mixed: {}", parts.join("; ")),
                    )
                }
            }
        }
        Arch::X86_64 => {
            let (locked, xchg, wide) = (c(Class::LockedRmw), c(Class::XchgMem), c(Class::WideCas));
            let libatomic = c(Class::LibatomicCall);
            if locked + xchg + wide == 0 {
                if libatomic > 0 {
                    return libatomic_only(libatomic);
                }
                return v(BinaryVerdictKind::NoAtomics, "no atomics".into());
            }
            v(
                BinaryVerdictKind::X86Locked,
                format!(
                    "x86-64 locked atomics: {}, {}, {} (each a full barrier under x86-TSO){}",
                    plural(locked, "lock-prefixed op", "lock-prefixed ops"),
                    plural(xchg, "xchg with memory", "xchg with memory"),
                    plural(wide, "cmpxchg8b/16b", "cmpxchg8b/16b"),
                    and_libatomic(libatomic),
                ),
            )
        }
        Arch::Riscv64 => {
            let amo = c(Class::Amo);
            let llsc = c(Class::LlscLoop).max(c(Class::StoreExclusive));
            let libatomic = c(Class::LibatomicCall);
            let more = and_libatomic(libatomic);
            match (amo > 0, llsc > 0) {
                (false, false) if libatomic > 0 => libatomic_only(libatomic),
                (false, false) => v(BinaryVerdictKind::NoAtomics, "no atomics".into()),
                (true, false) => v(
                    BinaryVerdictKind::RiscvAmo,
                    format!(
                        "AMO atomics only: {} (A extension){more}",
                        plural(amo, "AMO", "AMOs")
                    ),
                ),
                (false, true) => v(
                    BinaryVerdictKind::RiscvLrsc,
                    format!(
                        "LR/SC only: {}{more}",
                        plural(llsc, "LR/SC loop", "LR/SC loops")
                    ),
                ),
                (true, true) => v(
                    BinaryVerdictKind::RiscvAmoAndLrsc,
                    format!(
                        "AMO and LR/SC: {} and {} (compare-and-swap needs LR/SC without Zacas){more}",
                        plural(amo, "AMO", "AMOs"),
                        plural(llsc, "LR/SC loop", "LR/SC loops")
                    ),
                ),
            }
        }
    }
}

/// The PLT stubs of `image` and the imports they jump to (the arch's scan
/// finds them), for [`crate::plugin_file::PluginFile`].
pub(crate) fn plt_of(image: &Image<'_>) -> HashMap<u64, String> {
    match image.arch {
        crate::model::Arch::Aarch64 => crate::aarch64::scan(image).plt,
        crate::model::Arch::X86_64 => crate::x86_64::scan(image).plt,
        crate::model::Arch::Riscv64 => crate::riscv64::scan(image).plt,
    }
}
