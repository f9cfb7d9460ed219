//! The built-in litmus tests `atomlab suite` judges: the classic shapes and
//! case 004 (load buffering with relaxed accesses and acquire fences). The
//! texts are the golden tests in `tests/litmus/`, so they are checked there.

/// (file name, text) of each built-in test.
pub const SUITE: &[(&str, &str)] = &[
    (
        "LB+fence.acqs.litmus",
        include_str!("../tests/litmus/c/LB+fence.acqs.litmus"),
    ),
    (
        "MP+rlx.litmus",
        include_str!("../tests/litmus/c/MP+rlx.litmus"),
    ),
    (
        "MP+rel+acq.litmus",
        include_str!("../tests/litmus/c/MP+rel+acq.litmus"),
    ),
    (
        "SB+rel-acq.litmus",
        include_str!("../tests/litmus/c/SB+rel-acq.litmus"),
    ),
    (
        "SB+sc.litmus",
        include_str!("../tests/litmus/c/SB+sc.litmus"),
    ),
    (
        "IRIW+acq.litmus",
        include_str!("../tests/litmus/c/IRIW+acq.litmus"),
    ),
];

/// The built-in tests, parsed.
pub fn suite() -> Vec<atomlab_litmus::Test> {
    SUITE
        .iter()
        .filter_map(|(name, text)| atomlab_litmus::parse(name, text).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn builtins_parse() {
        assert_eq!(super::suite().len(), super::SUITE.len());
    }
}
