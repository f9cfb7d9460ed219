//! The machine fingerprint stamped on every result.
//!
//! What it reads: `/proc/cpuinfo` for the CPU model, `uname(2)` for the
//! kernel, `sched_getaffinity(2)` for the CPUs this process may use, the
//! standard library's run-time feature detection (which on Linux reads
//! `AT_HWCAP`/`AT_HWCAP2` on aarch64 and `cpuid` on x86) for the features
//! that change how atomics are compiled and what they cost, and the build
//! script's record of rustc and the target features the binary was built with.

use serde::{Deserialize, Serialize};

/// Whether hardware performance counters can be read here, and if not why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PmuStatus {
    /// True when `perf_event_open` gave a working hardware counter.
    pub available: bool,
    /// Why not, in the kernel's words where it gave any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
}

impl PmuStatus {
    /// The status before anyone has tried to open a counter.
    pub fn not_probed() -> PmuStatus {
        PmuStatus {
            available: false,
            reason: Some("not probed".into()),
        }
    }
}

/// How busy the machine was: what explains a noisy result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// `/proc/loadavg`: runnable tasks averaged over 1, 5 and 15 minutes.
    pub average: [f64; 3],
    /// CPUs busy with any process over a short sample of `/proc/stat`
    /// (`atomlab machine` takes one; absent elsewhere).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub busy_cpus: Option<f64>,
    /// The sample's length in seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sampled_s: Option<f64>,
}

impl Load {
    /// The load average now; `None` where `/proc/loadavg` cannot be read.
    pub fn now() -> Option<Load> {
        let text = std::fs::read_to_string("/proc/loadavg").ok()?;
        let mut f = text.split_whitespace().map(|x| x.parse::<f64>().ok());
        Some(Load {
            average: [f.next()??, f.next()??, f.next()??],
            busy_cpus: None,
            sampled_s: None,
        })
    }

    /// [`Load::now`], with the CPUs busy over `sample` measured from
    /// `/proc/stat`'s first line (proc(5): user, nice, system, idle,
    /// iowait, irq, softirq, steal, in clock ticks; idle and iowait are
    /// idle) — this process itself sleeps meanwhile.
    pub fn sampled(sample: std::time::Duration) -> Option<Load> {
        fn ticks() -> Option<(f64, f64)> {
            let stat = std::fs::read_to_string("/proc/stat").ok()?;
            let cpu = stat.lines().next()?.strip_prefix("cpu ")?;
            let v: Vec<f64> = cpu
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            let total: f64 = v.iter().take(8).sum();
            let idle = v.get(3)? + v.get(4).unwrap_or(&0.0);
            Some((total, idle))
        }
        let (t0, i0) = ticks()?;
        std::thread::sleep(sample);
        let (t1, i1) = ticks()?;
        let mut load = Load::now()?;
        let cpus = usable_cpus() as f64;
        let dt = t1 - t0;
        if dt > 0.0 {
            load.busy_cpus = Some(((dt - (i1 - i0)) / dt * cpus).clamp(0.0, cpus));
            load.sampled_s = Some(sample.as_secs_f64());
        }
        Some(load)
    }
}

/// What this machine is, as far as a memory-ordering measurement cares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `x86_64`, `aarch64`, `riscv64`…
    pub arch: String,
    /// The CPU's marketing or part name.
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cpus: usize,
    /// Features that change how atomics compile or what they cost, detected at
    /// run time (`lse`, `lse2`, `rcpc`, `rcpc2` on aarch64; `cmpxchg16b`,
    /// `rtm`, `avx2`… on x86_64).
    pub features: Vec<String>,
    /// Whether the CPU reports running under a hypervisor (x86 `hypervisor`
    /// flag), which usually means no PMU and noisy neighbours.
    pub virtualised: bool,
    /// Whether the process runs under user-mode emulation (qemu-user): no
    /// weak-memory behaviour and no meaningful timings.
    pub emulated: bool,
    /// `uname -sr`.
    pub kernel: String,
    /// The rustc that built this binary.
    pub rustc: String,
    /// The target triple this binary was built for.
    pub target: String,
    /// `target_feature`s enabled at build time.
    pub target_features: Vec<String>,
    /// Hardware counters.
    pub pmu: PmuStatus,
    /// How busy the machine was when the fingerprint was taken.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub load: Option<Load>,
}

impl Machine {
    /// The fingerprint as labelled facts, in the order every table shows
    /// them (the terminal's `atomlab machine` and the HTML report).
    pub fn facts(&self) -> Vec<(&'static str, String)> {
        let load_average = match &self.load {
            Some(l) => format!(
                "{:.2} {:.2} {:.2} (runnable tasks over 1, 5 and 15 min, on {} CPUs)",
                l.average[0], l.average[1], l.average[2], self.cpus
            ),
            None => "unknown".into(),
        };
        let available = match self
            .load
            .as_ref()
            .and_then(|l| Some((l.busy_cpus?, l.sampled_s?)))
        {
            Some((busy, s)) => {
                let free = (self.cpus as f64 - busy).max(0.0);
                format!(
                    "{free:.2} of {} CPUs idle over {s:.1} s ({busy:.2} busy with other work): {}",
                    self.cpus,
                    if busy >= 0.25 {
                        "threads of a measurement will share CPUs with that work, and its figures will say so"
                    } else {
                        "quiet"
                    }
                )
            }
            None => "not sampled (atomlab machine samples it)".into(),
        };
        let pmu = if self.pmu.available {
            "available".to_string()
        } else {
            format!(
                "unavailable ({})",
                self.pmu.reason.as_deref().unwrap_or("no reason given")
            )
        };
        let mut facts = vec![
            ("arch", self.arch.clone()),
            ("cpu", self.cpu_model.clone()),
            ("cpus", self.cpus.to_string()),
            ("features", self.features.join(" ")),
            ("virtualised", self.virtualised.to_string()),
            ("emulated", self.emulated.to_string()),
            ("kernel", self.kernel.clone()),
            ("rustc", self.rustc.clone()),
            ("target", self.target.clone()),
            ("target features", self.target_features.join(" ")),
            ("pmu", pmu),
        ];
        // A fingerprint from before atomlab recorded the load (an imported
        // or older run) shows no such rows.
        if self.load.is_some() {
            facts.push(("load average", load_average));
            facts.push(("CPU available", available));
        }
        facts
    }

    /// Fingerprints the running machine. Never fails: what cannot be read is
    /// reported as `unknown`.
    pub fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let emulated = under_qemu_user() || cpuinfo_is_foreign(&cpuinfo, std::env::consts::ARCH);
        // Under user-mode emulation /proc/cpuinfo describes the host.
        let virtualised = !emulated && cpuinfo_flags(&cpuinfo).any(|f| f == "hypervisor");
        let cpu_model = if emulated {
            format!(
                "emulated {} (host: {})",
                std::env::consts::ARCH,
                cpu_model(&cpuinfo)
            )
        } else {
            cpu_model(&cpuinfo)
        };
        Machine {
            arch: std::env::consts::ARCH.to_string(),
            cpu_model,
            cpus: usable_cpus(),
            features: runtime_features(&cpuinfo, emulated),
            virtualised,
            emulated,
            kernel: kernel(),
            rustc: env!("ATOMLAB_RUSTC_VERSION").to_string(),
            target: env!("ATOMLAB_TARGET").to_string(),
            target_features: env!("ATOMLAB_TARGET_FEATURES")
                .split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            pmu: PmuStatus::not_probed(),
            load: Load::now(),
        }
    }

    /// True when the CPU has the named run-time feature.
    pub fn has_feature(&self, name: &str) -> bool {
        self.features.iter().any(|f| f == name)
    }
}

/// The CPU's name from `/proc/cpuinfo`: `model name` on x86, the implementer
/// and part numbers on Arm (which has no name line).
pub fn cpu_model(cpuinfo: &str) -> String {
    let field = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    if let Some(name) = field("model name") {
        return name;
    }
    match (field("CPU implementer"), field("CPU part")) {
        (Some(imp), Some(part)) => match arm_part_name(&imp, &part) {
            Some(name) => name.to_string(),
            None => format!("Arm implementer {imp} part {part}"),
        },
        _ => field("uarch")
            .or_else(|| field("isa"))
            .unwrap_or_else(|| "unknown".into()),
    }
}

/// Names of the Arm cores the cases in this project ran on (Neoverse, Cortex,
/// Apple, Ampere), from the MIDR implementer and part numbers.
fn arm_part_name(implementer: &str, part: &str) -> Option<&'static str> {
    let imp = u32::from_str_radix(implementer.trim_start_matches("0x"), 16).ok()?;
    let part = u32::from_str_radix(part.trim_start_matches("0x"), 16).ok()?;
    Some(match (imp, part) {
        (0x41, 0xd03) => "Arm Cortex-A53",
        (0x41, 0xd04) => "Arm Cortex-A35",
        (0x41, 0xd05) => "Arm Cortex-A55",
        (0x41, 0xd07) => "Arm Cortex-A57",
        (0x41, 0xd08) => "Arm Cortex-A72",
        (0x41, 0xd0b) => "Arm Cortex-A76",
        (0x41, 0xd0c) => "Arm Neoverse-N1",
        (0x41, 0xd40) => "Arm Neoverse-V1",
        (0x41, 0xd49) => "Arm Neoverse-N2",
        (0x41, 0xd4f) => "Arm Neoverse-V2",
        (0xc0, 0xac3) => "Ampere-1",
        (0x61, _) => "Apple",
        _ => return None,
    })
}

fn cpuinfo_flags(cpuinfo: &str) -> impl Iterator<Item = &str> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("flags") || l.starts_with("Features"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v)
        .unwrap_or("")
        .split_whitespace()
}

fn usable_cpus() -> usize {
    // SAFETY: `set` is a plain bitmask the kernel fills; zeroed is a valid value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is this thread; the size matches the buffer passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc == 0 {
        // SAFETY: `set` was filled by the kernel above.
        let n = unsafe { libc::CPU_COUNT(&set) } as usize;
        if n > 0 {
            return n;
        }
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn kernel() -> String {
    // SAFETY: utsname is plain bytes; zeroed is valid and uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!("{} {}", field(&u.sysname), field(&u.release))
}

/// The architecture a `/proc/cpuinfo` describes, from the fields each kernel
/// port writes: `vendor_id` on x86, `CPU implementer` on Arm, `isa` on RISC-V.
pub fn cpuinfo_arch(cpuinfo: &str) -> Option<&'static str> {
    let has = |key: &str| {
        cpuinfo
            .lines()
            .any(|l| l.split_once(':').is_some_and(|(k, _)| k.trim() == key))
    };
    if has("vendor_id") {
        Some("x86_64")
    } else if has("CPU implementer") {
        Some("aarch64")
    } else if has("isa") && has("mmu") {
        Some("riscv64")
    } else {
        None
    }
}

/// True when `/proc/cpuinfo` describes another architecture than the one we
/// were built for: qemu-user passes the host's file through.
fn cpuinfo_is_foreign(cpuinfo: &str, arch: &str) -> bool {
    cpuinfo_arch(cpuinfo).is_some_and(|a| a != arch)
}

/// qemu-user leaves its own binary as the process's interpreter: the
/// auxiliary vector's `AT_EXECFN` still names us, but `/proc/self/exe` is the
/// emulator.
fn under_qemu_user() -> bool {
    std::fs::read_link("/proc/self/exe")
        .map(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("qemu-"))
        })
        .unwrap_or(false)
}

#[cfg(target_arch = "aarch64")]
fn runtime_features(_cpuinfo: &str, _emulated: bool) -> Vec<String> {
    let mut f = Vec::new();
    macro_rules! probe {
        ($($name:tt),*) => {$(
            if std::arch::is_aarch64_feature_detected!($name) {
                f.push($name.to_string());
            }
        )*};
    }
    probe!("lse", "lse2", "rcpc", "rcpc2", "crc", "sve");
    f
}

/// The x86 features atomlab reports, with the name `/proc/cpuinfo` gives
/// each (Linux's arch/x86/include/asm/cpufeatures.h).
#[cfg(target_arch = "x86_64")]
const X86_FEATURES: [(&str, &str); 4] = [
    ("cmpxchg16b", "cx16"),
    ("rtm", "rtm"),
    ("avx2", "avx2"),
    ("sse2", "sse2"),
];

/// The features from the kernel's `flags` line when it describes this CPU:
/// the kernel has run `cpuid` and cleared what it does not enable (AVX2
/// without XSAVE state, RTM when TSX is off). In a VM each `cpuid` traps to
/// the hypervisor (15–30 µs here), and `std`'s detection issues several, a
/// visible part of a small `atomlab check`.
#[cfg(target_arch = "x86_64")]
fn runtime_features(cpuinfo: &str, emulated: bool) -> Vec<String> {
    if !emulated && cpuinfo_flags(cpuinfo).next().is_some() {
        return X86_FEATURES
            .iter()
            .filter(|(_, flag)| cpuinfo_flags(cpuinfo).any(|f| f == *flag))
            .map(|(name, _)| name.to_string())
            .collect();
    }
    cpuid_features()
}

/// The features by `cpuid`, through `std`'s detection.
#[cfg(target_arch = "x86_64")]
fn cpuid_features() -> Vec<String> {
    let mut f = Vec::new();
    macro_rules! probe {
        ($($name:tt),*) => {$(
            if std::arch::is_x86_feature_detected!($name) {
                f.push($name.to_string());
            }
        )*};
    }
    probe!("cmpxchg16b", "rtm", "avx2", "sse2");
    f
}

#[cfg(not(any(target_arch = "aarch64", target_arch = "x86_64")))]
fn runtime_features(_cpuinfo: &str, _emulated: bool) -> Vec<String> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `machine` showed nothing of what explains a noisy result: now the
    /// load average, and with a sample the CPUs other work keeps busy.
    #[test]
    fn the_fingerprint_says_how_busy_the_machine_is() {
        let mut m = Machine::detect();
        let load = Load::sampled(std::time::Duration::from_millis(100)).expect("/proc/stat");
        let busy = load.busy_cpus.expect("a sample");
        assert!((0.0..=m.cpus as f64).contains(&busy), "{busy}");
        assert!(load.average.iter().all(|a| *a >= 0.0));
        m.load = Some(load);
        let facts = m.facts();
        let get = |k: &str| facts.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
        assert!(get("load average").is_some_and(|v| v.contains("runnable tasks")));
        assert!(get("CPU available").is_some_and(|v| v.contains(" CPUs idle over 0.1 s")));
        m.load = None;
        assert!(m.facts().iter().all(|(n, _)| *n != "load average"));
    }

    #[test]
    fn x86_model_name() {
        let info = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu hypervisor sse2\n";
        assert_eq!(cpu_model(info), "AMD EPYC 7B13");
        assert!(cpuinfo_flags(info).any(|f| f == "hypervisor"));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn cpuinfo_features_are_the_cpuid_features() {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        if cpuinfo_flags(&cpuinfo).next().is_none() {
            eprintln!("skipped: this /proc/cpuinfo has no flags line");
            return;
        }
        assert_eq!(runtime_features(&cpuinfo, false), cpuid_features());
        let info = "flags\t\t: fpu cx16 sse2 hypervisor\n";
        assert_eq!(runtime_features(info, false), ["cmpxchg16b", "sse2"]);
        // Under emulation the flags are the host's: ask the CPU instead.
        assert_eq!(runtime_features(info, true), cpuid_features());
    }

    #[test]
    fn arm_parts() {
        let info = "CPU implementer\t: 0x41\nCPU part\t: 0xd0c\nFeatures\t: fp asimd atomics\n";
        assert_eq!(cpu_model(info), "Arm Neoverse-N1");
        let info = "CPU implementer\t: 0x42\nCPU part\t: 0x001\n";
        assert_eq!(cpu_model(info), "Arm implementer 0x42 part 0x001");
        assert_eq!(cpu_model(""), "unknown");
    }

    #[test]
    fn a_foreign_cpuinfo_means_emulation() {
        let x86 = "vendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n";
        let arm = "CPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        let rv = "isa\t\t: rv64imafdc\nmmu\t\t: sv48\n";
        assert_eq!(cpuinfo_arch(x86), Some("x86_64"));
        assert_eq!(cpuinfo_arch(arm), Some("aarch64"));
        assert_eq!(cpuinfo_arch(rv), Some("riscv64"));
        assert_eq!(cpuinfo_arch(""), None);
        assert!(cpuinfo_is_foreign(x86, "aarch64"));
        assert!(!cpuinfo_is_foreign(arm, "aarch64"));
        assert!(!cpuinfo_is_foreign("", "riscv64"));
    }

    #[test]
    fn detect_fills_what_it_can() {
        let m = Machine::detect();
        assert_eq!(m.arch, std::env::consts::ARCH);
        assert!(m.cpus >= 1);
        assert!(m.kernel.starts_with("Linux"));
        assert!(m.rustc.starts_with("rustc"), "{}", m.rustc);
        assert!(!m.target.is_empty());
    }
}
