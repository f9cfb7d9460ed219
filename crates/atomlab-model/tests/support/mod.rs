//! What the integration tests share: reading herd7's logs.

use std::collections::BTreeSet;

/// Observation and sorted state lines of a herd log.
pub fn summary(log: &str) -> (String, BTreeSet<String>) {
    let lines: Vec<&str> = log.lines().collect();
    let mut obs = String::new();
    let mut states = BTreeSet::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(r) = l.strip_prefix("Observation ") {
            obs = r.split_whitespace().nth(1).unwrap_or("").to_string();
        }
        if let Some(n) = l.strip_prefix("States ") {
            let n: usize = n.trim().parse().unwrap();
            for s in &lines[i + 1..i + 1 + n] {
                let mut items: Vec<&str> = s
                    .split(';')
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .collect();
                items.sort();
                states.insert(items.join("; "));
            }
        }
    }
    (obs, states)
}

/// The flags a herd log reports (`Flag NAME` lines), sorted.
pub fn flags(log: &str) -> BTreeSet<String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("Flag "))
        .map(|f| f.trim().to_string())
        .collect()
}
