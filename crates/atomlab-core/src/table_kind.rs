//! Which table a bench record prints in, read from the record itself, so
//! that whatever draws it (atomlab-report) needs nothing of the scenario
//! registry that made it: a saved record prints the same in any later
//! atomlab, whatever scenarios that one has.

use crate::Record;

/// Which table a bench record is printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// Timed runs: ops/s and ns/op per variant and thread count.
    Timed,
    /// A fixed amount of work timed to completion (lock, 002).
    FixedWork,
    /// A fixed offered rate: the CPU a load needs and its latency.
    FixedRate,
    /// Round trips between two CPUs (pingpong).
    RoundTrip,
    /// A queue between a producer and a consumer (spsc).
    Queue,
}

impl TableKind {
    /// The table `r` prints in, from the parameters its plan gave it
    /// (present on a record that failed too): a queue's records carry its
    /// `capacity`, a round trip's its two CPUs (`cpu_a`, `cpu_b`); the
    /// others are timed unless their `mode` is fixed work or a fixed rate.
    /// A mode this version does not know prints in none.
    pub fn of(r: &Record) -> Option<TableKind> {
        let has = |k: &str| r.parameters.contains_key(k);
        if has("capacity") {
            return Some(TableKind::Queue);
        }
        if has("cpu_a") && has("cpu_b") {
            return Some(TableKind::RoundTrip);
        }
        match r.parameters.get("mode").map(|m| m.as_str()) {
            Some(Some("fixed-work")) => Some(TableKind::FixedWork),
            Some(Some("fixed-rate")) => Some(TableKind::FixedRate),
            Some(_) => None,
            None => Some(TableKind::Timed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_print_in_the_table_their_parameters_say() {
        let rec = |scenario: &str, params: &[(&str, &str)]| {
            let mut r = Record::new("bench", scenario, "v");
            for (k, v) in params {
                r.param(k, *v);
            }
            TableKind::of(&r)
        };
        use TableKind::*;
        assert_eq!(rec("counter", &[]), Some(Timed));
        assert_eq!(rec("lock", &[("mode", "fixed-work")]), Some(FixedWork));
        assert_eq!(rec("refcount", &[("mode", "fixed-rate")]), Some(FixedRate));
        assert_eq!(
            rec("pingpong", &[("cpu_a", "0"), ("cpu_b", "1")]),
            Some(RoundTrip)
        );
        assert_eq!(
            rec("spsc", &[("capacity", "64"), ("load", "fixed-rate")]),
            Some(Queue)
        );
        assert_eq!(rec("someone-elses", &[]), Some(Timed));
        assert_eq!(rec("lock", &[("mode", "fixed-mood")]), None);
    }
}
