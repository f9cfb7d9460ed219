//! Scratch: `cargo run -p atomlab-verify --example verify_file -- FILE [VARIANT…]`.
use std::time::Duration;
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = std::fs::read(&args[0]).unwrap();
    let p = atomlab_verify::Plugin::read(&args[0], &data).unwrap();
    let opts = atomlab_verify::Options {
        variants: if args.len() > 1 { Some(args[1..].to_vec()) } else { None },
        models: Some(vec!["aarch64".into(), "sc".into()]),
        threads: 2,
        rounds: 1,
        unroll: 4,
        timeout: Duration::from_secs(60),
    };
    let models = p.models(&opts).unwrap();
    for v in p.select(&opts).unwrap() {
        for o in p.check(v, &models, &opts) {
            println!("{} {} {:?} {} {:?} {} | {}", o.variant, o.model, o.lse, o.verdict.word(), o.elapsed, o.executions, o.reason);
            if let Some(c) = o.counterexample { println!("{c}"); }
        }
    }
}
