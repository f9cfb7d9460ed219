//! `include/atomlab.h` and [`atomlab_plugin_abi::abi`] describe one layout:
//! a C program built against the header prints every struct's size and
//! every field's offset, the kinds' values and the ABI version, and each
//! must equal what the Rust types give (`size_of`, `offset_of!`). A field
//! added to one side only, or reordered, fails here instead of in a
//! plugin's call.
//!
//! Needs a C compiler (`cc`); without one the test says so and passes,
//! except under `.ci/run` (ATOMLAB_CI=1), which has one.

use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;

use atomlab_plugin_abi::abi::{
    Descriptor, LockFns, OpFns, RefcountFns, SpscFns, Variant, VariantFns, ABI_VERSION, KINDS,
    KIND_LOCK, KIND_OP, KIND_REFCOUNT, KIND_SPSC,
};

/// What the Rust side says, one `name value` line each, in the C
/// program's order.
fn rust_side() -> Vec<String> {
    let lines = [
        ("version", ABI_VERSION as usize),
        ("kind_lock", KIND_LOCK as usize),
        ("kind_spsc", KIND_SPSC as usize),
        ("kind_refcount", KIND_REFCOUNT as usize),
        ("kind_op", KIND_OP as usize),
        ("lock", size_of::<LockFns>()),
        ("lock.new_", offset_of!(LockFns, new)),
        ("lock.lock", offset_of!(LockFns, lock)),
        ("lock.unlock", offset_of!(LockFns, unlock)),
        ("lock.try_lock", offset_of!(LockFns, try_lock)),
        ("lock.free_", offset_of!(LockFns, free)),
        ("spsc", size_of::<SpscFns>()),
        ("spsc.new_", offset_of!(SpscFns, new)),
        ("spsc.push", offset_of!(SpscFns, push)),
        ("spsc.pop", offset_of!(SpscFns, pop)),
        ("spsc.free_", offset_of!(SpscFns, free)),
        ("refcount", size_of::<RefcountFns>()),
        ("refcount.new_", offset_of!(RefcountFns, new)),
        ("refcount.get", offset_of!(RefcountFns, get)),
        ("refcount.put", offset_of!(RefcountFns, put)),
        ("refcount.free_", offset_of!(RefcountFns, free)),
        ("op", size_of::<OpFns>()),
        ("op.new_", offset_of!(OpFns, new)),
        ("op.op", offset_of!(OpFns, op)),
        ("op.read", offset_of!(OpFns, read)),
        ("op.free_", offset_of!(OpFns, free)),
        ("variant", size_of::<Variant>()),
        ("variant.name", offset_of!(Variant, name)),
        ("variant.kind", offset_of!(Variant, kind)),
        ("variant.u", offset_of!(Variant, u)),
        ("variant.u.size", size_of::<VariantFns>()),
        ("plugin", size_of::<Descriptor>()),
        ("plugin.abi_version", offset_of!(Descriptor, abi_version)),
        ("plugin.name", offset_of!(Descriptor, name)),
        ("plugin.n_variants", offset_of!(Descriptor, n_variants)),
        ("plugin.variants", offset_of!(Descriptor, variants)),
    ];
    lines.iter().map(|(n, v)| format!("{n} {v}")).collect()
}

/// The same lines from C, as the header defines them.
const C_SIDE: &str = r#"
#include <stddef.h>
#include <stdio.h>
#include "atomlab.h"
#define S(n, t) printf("%s %zu\n", n, sizeof(t))
#define O(n, t, f) printf("%s %zu\n", n, offsetof(t, f))
int main(void) {
    struct atomlab_variant v;
    printf("version %d\n", ATOMLAB_PLUGIN_ABI_VERSION);
    printf("kind_lock %d\nkind_spsc %d\nkind_refcount %d\nkind_op %d\n",
           ATOMLAB_KIND_LOCK, ATOMLAB_KIND_SPSC, ATOMLAB_KIND_REFCOUNT, ATOMLAB_KIND_OP);
    S("lock", struct atomlab_lock);
    O("lock.new_", struct atomlab_lock, new_); O("lock.lock", struct atomlab_lock, lock);
    O("lock.unlock", struct atomlab_lock, unlock); O("lock.try_lock", struct atomlab_lock, try_lock);
    O("lock.free_", struct atomlab_lock, free_);
    S("spsc", struct atomlab_spsc);
    O("spsc.new_", struct atomlab_spsc, new_); O("spsc.push", struct atomlab_spsc, push);
    O("spsc.pop", struct atomlab_spsc, pop); O("spsc.free_", struct atomlab_spsc, free_);
    S("refcount", struct atomlab_refcount);
    O("refcount.new_", struct atomlab_refcount, new_); O("refcount.get", struct atomlab_refcount, get);
    O("refcount.put", struct atomlab_refcount, put); O("refcount.free_", struct atomlab_refcount, free_);
    S("op", struct atomlab_op);
    O("op.new_", struct atomlab_op, new_); O("op.op", struct atomlab_op, op);
    O("op.read", struct atomlab_op, read); O("op.free_", struct atomlab_op, free_);
    S("variant", struct atomlab_variant);
    O("variant.name", struct atomlab_variant, name); O("variant.kind", struct atomlab_variant, kind);
    O("variant.u", struct atomlab_variant, u);
    printf("variant.u.size %zu\n", sizeof v.u);
    S("plugin", struct atomlab_plugin);
    O("plugin.abi_version", struct atomlab_plugin, abi_version);
    O("plugin.name", struct atomlab_plugin, name);
    O("plugin.n_variants", struct atomlab_plugin, n_variants);
    O("plugin.variants", struct atomlab_plugin, variants);
    return 0;
}
"#;

/// Compiles `src` against include/atomlab.h and runs it: its lines, or
/// `None` without a C compiler (which CI provides: there it fails).
fn c_lines(name: &str, src: &str) -> Option<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("atomlab-abi-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&c, src).unwrap();
    let built = Command::new("cc")
        .arg("-I")
        .arg(root.join("include"))
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .output();
    let built = match built {
        Ok(b) => b,
        Err(e) => {
            assert!(
                std::env::var_os("ATOMLAB_CI").is_none(),
                "cc cannot run ({e}), and CI provides one"
            );
            println!("skipped: no C compiler (cc: {e})");
            return None;
        }
    };
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn the_header_and_the_rust_types_have_one_layout() {
    let Some(c) = c_lines("layout", C_SIDE) else {
        return;
    };
    assert_eq!(
        c,
        rust_side(),
        "include/atomlab.h (left) and abi.rs (right) disagree"
    );
}

/// `abi::KINDS`, the one list of kinds, against the header: a C program
/// written from the table names each kind's `ATOMLAB_KIND_<NAME>` and
/// every member of its `struct atomlab_<name>` (it compiles only if the
/// header has them all) and prints their values and offsets, which must
/// be the table's values and, in order, the layout's offsets of that
/// struct (so no member is missing from the table either).
#[test]
fn the_table_of_kinds_is_the_headers() {
    let mut src = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"atomlab.h\"\nint main(void) {\n",
    );
    for k in KINDS {
        let upper = k.name.to_uppercase();
        src.push_str(&format!(
            "    printf(\"kind_{} %d\\n\", ATOMLAB_KIND_{upper});\n",
            k.name
        ));
        for m in k.members {
            src.push_str(&format!(
                "    printf(\"{0}.{m} %zu\\n\", offsetof(struct atomlab_{0}, {m}));\n",
                k.name
            ));
        }
    }
    src.push_str("    return 0;\n}\n");
    let Some(c) = c_lines("kinds", &src) else {
        return;
    };
    let mut want = Vec::new();
    for k in KINDS {
        want.push(format!("kind_{} {}", k.name, k.value));
        let prefix = format!("{}.", k.name);
        want.extend(rust_side().into_iter().filter(|l| l.starts_with(&prefix)));
    }
    assert_eq!(
        c, want,
        "the header (left) and abi::KINDS with abi.rs's layout (right) disagree"
    );
}
