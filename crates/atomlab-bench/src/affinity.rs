//! CPU affinity through `sched_getaffinity(2)` / `sched_setaffinity(2)`.

/// The CPUs this process may run on, in ascending order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is a plain bitmask; zeroed is valid.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the size matches the buffer.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        let n = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        return (0..n).collect();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `set` was filled by the kernel; `c` is within CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Pins the calling thread to `cpu`. Errors carry the OS's reason.
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is checked against CPU_SETSIZE by the kernel-side mask size;
    // CPU_SET on an index beyond the set would be out of bounds, so guard it.
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: `cpu` < CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 is the calling thread; the size matches the buffer.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Restores the calling thread's affinity to `cpus`.
pub fn unpin_current_thread(cpus: &[usize]) {
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: `c` < CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; the size matches the buffer.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_to_each_allowed_cpu() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        std::thread::spawn(move || {
            for &c in &cpus {
                pin_current_thread(c).unwrap();
                assert_eq!(allowed_cpus(), vec![c]);
            }
            unpin_current_thread(&cpus);
            assert_eq!(allowed_cpus(), cpus);
        })
        .join()
        .unwrap();
        assert!(pin_current_thread(1 << 20).is_err());
    }
}
