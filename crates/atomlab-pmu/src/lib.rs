//! Hardware performance counters through `perf_event_open(2)`.
//!
//! Written against the kernel ABI directly (`perf_event_attr` in its
//! 64-byte `PERF_ATTR_SIZE_VER0` form, which every kernel since 2.6.31
//! accepts, and a read format of value, time enabled and time running), which
//! is all a counting harness needs: the perf-event2 crate would bring seven
//! crates for the same three syscalls.
//!
//! Counters are per thread (`pid = 0, cpu = -1`), user space only, opened
//! disabled and enabled around the measured loop; or attached to another
//! thread by its id, with `inherit` so that the threads and processes it
//! creates afterwards are counted too (`perf stat -p`'s model, which is what
//! `atomlab load --server-pid` uses for a server's processes). When the PMU is
//! multiplexed (more events than hardware counters) the count is scaled by
//! `time_enabled / time_running`, as `perf stat` does, and the record says so.
//! When the kernel refuses (a VM without a virtual PMU, `perf_event_paranoid`)
//! the reason is reported once and the harness carries on without counters.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

use std::io;

/// A counter to open: a generic hardware event or a raw, model-specific code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    /// The name the user gave (`cycles`, `r6e`).
    pub name: String,
    /// `perf_event_attr.type`.
    pub kind: u32,
    /// `perf_event_attr.config`.
    pub config: u64,
}

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_RAW: u32 = 4;

/// Generic hardware events (`enum perf_hw_id` in linux/perf_event.h), by the
/// names `perf list` gives them.
pub const HARDWARE_EVENTS: [(&str, u64); 10] = [
    ("cycles", 0),
    ("instructions", 1),
    ("cache-references", 2),
    ("cache-misses", 3),
    ("branches", 4),
    ("branch-misses", 5),
    ("bus-cycles", 6),
    ("stalled-cycles-frontend", 7),
    ("stalled-cycles-backend", 8),
    ("ref-cycles", 9),
];

/// Arm PMU events by name, mapped to their raw event numbers: the
/// architectural common events of the Arm ARM (DDI 0487, D11.11 "The PMU
/// event number space and common events"), and two IMPLEMENTATION DEFINED
/// Cortex-A53/A55 events (`stall_backend_ld` 0xE7, `stall_backend_st` 0xE8,
/// from their TRMs) that the seL4 SPSC-queue thread (004) used on an i.MX8M.
/// Note that 001's `perf record -e r6e` counts STREX_FAIL_SPEC, the failed
/// store-exclusives of LL/SC loops under contention; all store-exclusives
/// are STREX_SPEC, 0x6F.
pub const ARM_EVENTS: [(&str, u64, &str); 14] = [
    ("sw_incr", 0x00, "architectural"),
    ("l1d_cache_refill", 0x03, "architectural"),
    ("l1d_cache", 0x04, "architectural"),
    ("inst_retired", 0x08, "architectural"),
    ("cpu_cycles", 0x11, "architectural"),
    ("mem_access", 0x13, "architectural"),
    ("bus_access", 0x19, "architectural"),
    ("stall_frontend", 0x23, "architectural"),
    ("stall_backend", 0x24, "architectural"),
    ("ldrex_spec", 0x6c, "architectural"),
    ("strex_pass_spec", 0x6d, "architectural"),
    ("strex_fail_spec", 0x6e, "architectural"),
    (
        "stall_backend_ld",
        0xe7,
        "Cortex-A53/A55 implementation defined",
    ),
    (
        "stall_backend_st",
        0xe8,
        "Cortex-A53/A55 implementation defined",
    ),
];

/// `strex_spec` is listed apart so the table above stays sorted by code.
const ARM_STREX_SPEC: (&str, u64, &str) = ("strex_spec", 0x6f, "architectural");

/// STALL_BACKEND_MEM (0x4005), a common event of Armv8.6's extended event
/// space (Arm ARM D11.11): backend stalls waiting on memory.
const ARM_STALL_BACKEND_MEM: (&str, u64, &str) = ("stall_backend_mem", 0x4005, "architectural");

/// The Arm stall names that have a generic perf equivalent elsewhere
/// (`stalled-cycles-*`, which the kernel maps to each CPU's own events where
/// it has them, e.g. AMD's dispatch stalls), so `--events stall_backend`
/// means the same thing on x86.
const STALL_ALIASES: [(&str, &str); 2] = [
    ("stall_frontend", "stalled-cycles-frontend"),
    ("stall_backend", "stalled-cycles-backend"),
];

/// Why an event name was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownEvent {
    /// Not a name we know.
    #[error("unknown event '{name}': expected one of {valid}, a raw code such as r6e (hex, as perf writes it){arm}", valid = HARDWARE_EVENTS.map(|e| e.0).join(", "), arm = if *on_arm { format!(", or an Arm event: {}", arm_names().join(", ")) } else { String::new() })]
    Unknown {
        /// The name as given.
        name: String,
        /// Whether Arm names would have been accepted.
        on_arm: bool,
    },
    /// An Arm event named on another architecture.
    #[error("event '{name}' is an Arm PMU event (raw 0x{code:x}); this is {arch}: give this CPU's raw code (rNNNN) instead")]
    WrongArch {
        /// The name as given.
        name: String,
        /// Its Arm code.
        code: u64,
        /// The architecture we run on.
        arch: String,
    },
}

fn arm_names() -> Vec<&'static str> {
    let mut v: Vec<&str> = ARM_EVENTS.iter().map(|e| e.0).collect();
    v.push(ARM_STREX_SPEC.0);
    v.push(ARM_STALL_BACKEND_MEM.0);
    v
}

fn arm_event(name: &str) -> Option<(&'static str, u64)> {
    ARM_EVENTS
        .iter()
        .chain([&ARM_STREX_SPEC, &ARM_STALL_BACKEND_MEM])
        .find(|e| e.0 == name)
        .map(|e| (e.0, e.1))
}

impl EventSpec {
    /// Parses a perf-style event name for this machine's architecture.
    pub fn parse(name: &str) -> Result<EventSpec, UnknownEvent> {
        EventSpec::parse_for(name, std::env::consts::ARCH)
    }

    /// Parses a perf-style event name for `arch`: a generic hardware event,
    /// `rNNNN` with a hexadecimal raw code, or on aarch64 an Arm event name
    /// (case-insensitive, as the Arm ARM writes them in capitals).
    pub fn parse_for(name: &str, arch: &str) -> Result<EventSpec, UnknownEvent> {
        let on_arm = arch == "aarch64";
        let unknown = || UnknownEvent::Unknown {
            name: name.to_string(),
            on_arm,
        };
        let lower = name.to_ascii_lowercase();
        if !on_arm {
            if let Some((arm, generic)) = STALL_ALIASES.iter().find(|(a, _)| *a == lower) {
                let config = HARDWARE_EVENTS
                    .iter()
                    .find(|(n, _)| n == generic)
                    .map(|e| e.1)
                    .unwrap_or_default();
                return Ok(EventSpec {
                    name: arm.to_string(),
                    kind: PERF_TYPE_HARDWARE,
                    config,
                });
            }
        }
        if let Some((n, code)) = arm_event(&lower) {
            return if on_arm {
                Ok(EventSpec {
                    name: n.to_string(),
                    kind: PERF_TYPE_RAW,
                    config: code,
                })
            } else {
                Err(UnknownEvent::WrongArch {
                    name: name.to_string(),
                    code,
                    arch: arch.to_string(),
                })
            };
        }
        if let Some(&(n, config)) = HARDWARE_EVENTS.iter().find(|(n, _)| *n == name) {
            return Ok(EventSpec {
                name: n.to_string(),
                kind: PERF_TYPE_HARDWARE,
                config,
            });
        }
        let hex = name.strip_prefix('r').ok_or_else(unknown)?;
        if hex.is_empty() || hex.len() > 16 {
            return Err(unknown());
        }
        let config = u64::from_str_radix(hex, 16).map_err(|_| unknown())?;
        Ok(EventSpec {
            name: name.to_string(),
            kind: PERF_TYPE_RAW,
            config,
        })
    }

    /// Core cycles.
    pub fn cycles() -> EventSpec {
        EventSpec::parse("cycles").expect("built-in name")
    }

    /// Retired instructions.
    pub fn instructions() -> EventSpec {
        EventSpec::parse("instructions").expect("built-in name")
    }
}

/// `struct perf_event_attr`, first 64 bytes (PERF_ATTR_SIZE_VER0).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const ATTR_FLAG_DISABLED: u64 = 1 << 0;
const ATTR_FLAG_INHERIT: u64 = 1 << 1;
const ATTR_FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const ATTR_FLAG_EXCLUDE_HV: u64 = 1 << 6;
const READ_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
const READ_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_RESET: libc::c_ulong = 0x2403;

/// One counter's raw reading: the count and the times it was enabled and
/// actually counting (they differ when the PMU is multiplexed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reading {
    /// Raw count.
    pub value: u64,
    /// Nanoseconds the event was enabled.
    pub time_enabled: u64,
    /// Nanoseconds the event was actually on a hardware counter.
    pub time_running: u64,
}

impl Reading {
    /// Decodes the 24 bytes `read(2)` returns for our read format.
    pub fn decode(bytes: &[u8]) -> Option<Reading> {
        if bytes.len() < 24 {
            return None;
        }
        let word = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            u64::from_ne_bytes(b)
        };
        Some(Reading {
            value: word(0),
            time_enabled: word(1),
            time_running: word(2),
        })
    }

    /// The count scaled for multiplexing (`value * enabled / running`), as
    /// `perf stat` reports it; `None` when the event never ran.
    pub fn scaled(&self) -> Option<f64> {
        if self.time_running == 0 {
            return if self.time_enabled == 0 && self.value > 0 {
                Some(self.value as f64)
            } else {
                None
            };
        }
        Some(self.value as f64 * self.time_enabled as f64 / self.time_running as f64)
    }

    /// True when the count had to be scaled (the event shared a counter).
    pub fn multiplexed(&self) -> bool {
        self.time_running != 0 && self.time_running < self.time_enabled
    }
}

/// An open counter for the calling thread.
#[derive(Debug)]
pub struct Counter {
    fd: libc::c_int,
}

impl Counter {
    /// Opens `spec` for the calling thread, user space only, disabled.
    pub fn open(spec: &EventSpec) -> io::Result<Counter> {
        Counter::open_for(spec, 0, 0)
    }

    /// Opens `spec` for the thread `tid` (of any process the kernel lets
    /// us observe: same user and `perf_event_paranoid` ≤ 2, or
    /// CAP_PERFMON), user space only, disabled, counting the threads and
    /// processes it creates from now on as well.
    pub fn attach(spec: &EventSpec, tid: libc::pid_t) -> io::Result<Counter> {
        if tid <= 0 {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        Counter::open_for(spec, tid, ATTR_FLAG_INHERIT)
    }

    fn open_for(spec: &EventSpec, tid: libc::pid_t, extra_flags: u64) -> io::Result<Counter> {
        let attr = PerfEventAttr {
            kind: spec.kind,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config: spec.config,
            read_format: READ_FORMAT_TOTAL_TIME_ENABLED | READ_FORMAT_TOTAL_TIME_RUNNING,
            flags: ATTR_FLAG_DISABLED
                | ATTR_FLAG_EXCLUDE_KERNEL
                | ATTR_FLAG_EXCLUDE_HV
                | extra_flags,
            ..Default::default()
        };
        // SAFETY: `attr` is a valid perf_event_attr of the size it declares;
        // pid `tid` (0: this thread) / cpu -1 is "that thread on any CPU";
        // no group.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                tid,
                -1 as libc::c_int,
                -1 as libc::c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Counter {
            fd: fd as libc::c_int,
        })
    }

    fn ioctl(&self, request: libc::c_ulong) -> io::Result<()> {
        // SAFETY: `fd` is an open perf event; these requests take no argument.
        let rc = unsafe { libc::ioctl(self.fd, request as _, 0) };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Zeroes and starts the counter.
    pub fn start(&self) -> io::Result<()> {
        self.ioctl(IOC_RESET)?;
        self.ioctl(IOC_ENABLE)
    }

    /// Stops the counter and reads it.
    pub fn stop(&self) -> io::Result<Reading> {
        self.ioctl(IOC_DISABLE)?;
        let mut buf = [0u8; 24];
        // SAFETY: `buf` is writable for its length.
        let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Reading::decode(&buf[..n as usize])
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "short perf read"))
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        // SAFETY: `fd` is owned by this counter and closed once.
        unsafe { libc::close(self.fd) };
    }
}

/// Tries to open `cycles` on the calling thread: `Ok` when hardware counters
/// work here, otherwise the reason in words a user can act on.
pub fn probe() -> Result<(), String> {
    match Counter::open(&EventSpec::cycles()) {
        Ok(c) => {
            c.start().map_err(|e| format!("perf ioctl failed: {e}"))?;
            c.stop().map_err(|e| format!("perf read failed: {e}"))?;
            Ok(())
        }
        Err(e) => Err(explain_open_error(&e)),
    }
}

/// Turns a `perf_event_open` failure into advice.
pub fn explain_open_error(e: &io::Error) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => format!(
            "perf_event_open: {e}: this CPU or hypervisor exposes no such hardware event \
             (typical of VMs without a virtual PMU); run on bare metal for core cycles"
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "perf_event_open: {e}: kernel.perf_event_paranoid is {paranoid}; run as root or \
             `sysctl kernel.perf_event_paranoid=1`"
        ),
        Some(libc::ENOSYS) => {
            "perf_event_open is not implemented here (no kernel support or emulation)".into()
        }
        _ => format!("perf_event_open: {e} (perf_event_paranoid={paranoid})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_raw_codes() {
        let c = EventSpec::parse("cycles").unwrap();
        assert_eq!((c.kind, c.config), (PERF_TYPE_HARDWARE, 0));
        let r = EventSpec::parse("r6e").unwrap();
        assert_eq!((r.kind, r.config), (PERF_TYPE_RAW, 0x6e));
        let r = EventSpec::parse("r01c2").unwrap();
        assert_eq!(r.config, 0x1c2);
        for bad in ["", "r", "rxyz", "cycle", "r12345678901234567", "R6e"] {
            let e = EventSpec::parse_for(bad, "x86_64").unwrap_err();
            assert!(e.to_string().contains("instructions"), "{e}");
            assert!(!e.to_string().contains("strex"), "{e}");
        }
        let e = EventSpec::parse_for("cycle", "aarch64").unwrap_err();
        assert!(e.to_string().contains("strex_fail_spec"), "{e}");
    }

    #[test]
    fn arm_event_table() {
        // The Arm ARM's common event numbers, and 001's r6e.
        let code = |n: &str| EventSpec::parse_for(n, "aarch64").unwrap().config;
        assert_eq!(code("inst_retired"), 0x08);
        assert_eq!(code("cpu_cycles"), 0x11);
        assert_eq!(code("ldrex_spec"), 0x6c);
        assert_eq!(code("strex_pass_spec"), 0x6d);
        assert_eq!(
            code("strex_fail_spec"),
            EventSpec::parse_for("r6e", "aarch64").unwrap().config
        );
        assert_eq!(code("STREX_SPEC"), 0x6f);
        assert_eq!(code("stall_backend_ld"), 0xe7);
        assert_eq!(code("stall_backend_st"), 0xe8);
        assert_eq!(code("stall_backend_mem"), 0x4005);
        assert_eq!(code("stall_backend"), 0x24);
        // The stall names mean perf's generic stall events on x86.
        let x = |n: &str| EventSpec::parse_for(n, "x86_64").unwrap();
        assert_eq!(
            (x("stall_backend").kind, x("stall_backend").config),
            (PERF_TYPE_HARDWARE, 8)
        );
        assert_eq!(
            (x("stall_frontend").kind, x("stall_frontend").config),
            (PERF_TYPE_HARDWARE, 7)
        );
        assert!(EventSpec::parse_for("stall_backend_mem", "x86_64").is_err());
        assert_eq!(
            EventSpec::parse_for("strex_spec", "aarch64").unwrap().kind,
            PERF_TYPE_RAW
        );
        // Names are unique and the codes fit the 16-bit event number space.
        let names = arm_names();
        let mut dedup = names.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), names.len());
        assert!(ARM_EVENTS.iter().all(|e| e.1 <= 0xffff));
        // On x86 an Arm name is refused with its code, not silently mapped.
        let e = EventSpec::parse_for("strex_fail_spec", "x86_64").unwrap_err();
        assert!(
            e.to_string().contains("0x6e") && e.to_string().contains("x86_64"),
            "{e}"
        );
    }

    #[test]
    fn attr_is_the_version_0_size() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 64);
    }

    #[test]
    fn decodes_recorded_readings() {
        // The bytes read(2) returns for our read format: value, time enabled,
        // time running (here a counter that ran all the time it was enabled).
        let mut bytes = Vec::new();
        for w in [1_234_567u64, 2_000_000, 2_000_000] {
            bytes.extend_from_slice(&w.to_ne_bytes());
        }
        let r = Reading::decode(&bytes).unwrap();
        assert_eq!(r.value, 1_234_567);
        assert!(!r.multiplexed());
        assert_eq!(r.scaled(), Some(1_234_567.0));
        // Multiplexed: counted a quarter of the time it was enabled.
        let r = Reading {
            value: 1000,
            time_enabled: 4000,
            time_running: 1000,
        };
        assert!(r.multiplexed());
        assert_eq!(r.scaled(), Some(4000.0));
        // Never scheduled on a counter: no figure rather than a zero.
        let r = Reading {
            value: 0,
            time_enabled: 4000,
            time_running: 0,
        };
        assert_eq!(r.scaled(), None);
        assert!(Reading::decode(&bytes[..16]).is_none());
    }

    #[test]
    fn probe_answers_either_way() {
        // Either the counters work, or the reason names perf_event_open.
        match probe() {
            Ok(()) => {
                let c = Counter::open(&EventSpec::instructions()).unwrap();
                c.start().unwrap();
                let mut x = 0u64;
                for i in 0..100_000u64 {
                    x = std::hint::black_box(x ^ i);
                }
                let r = c.stop().unwrap();
                assert!(r.value > 100_000, "{r:?}");
                std::hint::black_box(x);
            }
            Err(why) => assert!(why.contains("perf_event_open"), "{why}"),
        }
    }
}
