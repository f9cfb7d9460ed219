//! atomlab's HTML report: one self-contained page for one or more runs
//! and, optionally, an A/B comparison.
#![deny(missing_docs)]
