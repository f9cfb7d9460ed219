//! A register or location gets one value in the initial state: a second
//! one, under the same name or an alias of the same register (eax for rax,
//! W1 for X1, t0 for x5, another case), is refused at its position, in
//! every dialect. `atomlab run` once loaded the last value while its
//! address check had accepted the first (issue 22: a write at 0x41414141).

use atomlab_litmus::parse;

fn refused(src: &str) -> atomlab_litmus::ParseError {
    match parse("t.litmus", src) {
        Ok(_) => panic!("accepted a value given twice:\n{src}"),
        Err(e) => e,
    }
}

#[test]
fn a_register_given_twice_is_refused_in_every_dialect() {
    let cases = [
        ("X86 D\n{ 0:EAX=x; 0:EAX=0x41414141; }\n P0 ;\n MOV [EAX],$1 ;\nexists (x=1)\n", "0:EAX", 12),
        ("X86 D\n{ 0:EAX=x; 0:eax=1; }\n P0 ;\n MOV [EAX],$1 ;\nexists (x=1)\n", "0:EAX", 12),
        ("X86_64 D\n{ 0:rax=x; 0:eax=1; }\n P0 ;\n movq $1,(%rax) ;\nexists (x=1)\n", "0:rax", 12),
        ("X86_64 D\n{ 0:rax=x; 0:RAX=1; }\n P0 ;\n movq $1,(%rax) ;\nexists (x=1)\n", "0:rax", 12),
        ("AArch64 D\n{ 0:X1=x; 0:W1=1; }\n P0 ;\n STR W2,[X1] ;\nexists (x=1)\n", "0:X1", 11),
        ("RISCV D\n{ 0:x5=x; 0:t0=1; }\n P0 ;\n sw x6,0(x5) ;\nexists (x=1)\n", "0:x5", 11),
        ("C D\n{ 0:r0=x; 0:r0=0x41414141; }\nP0(int *x) {\n  int *r0;\n  *r0 = 1;\n}\nexists (x=1)\n", "0:r0", 11),
    ];
    for (src, reg, column) in cases {
        let e = refused(src);
        assert!(
            e.message
                .contains(&format!("register {reg} is initialised twice")),
            "{e}"
        );
        assert_eq!((e.line, e.column), (2, column), "{e}");
        assert!(e.message.contains("first at 2:3"), "{e}");
    }
}

#[test]
fn an_alias_is_named_in_the_message() {
    let e = refused("X86_64 D\n{ 0:rax=x; 0:eax=1; }\n P0 ;\n movq $1,(%rax) ;\nexists (x=1)\n");
    assert!(
        e.message.contains("'rax' and 'eax' name the same register"),
        "{e}"
    );
}

#[test]
fn a_location_given_twice_is_refused() {
    let e = refused("X86 D\n{ x=1;\n  x=2; }\n P0 ;\n MOV [x],$1 ;\nexists (x=1)\n");
    assert!(
        e.message.contains("location 'x' is initialised twice"),
        "{e}"
    );
    assert_eq!((e.line, e.column), (3, 3), "{e}");
    let e = refused("C D\n{ int x = 1; int x = 2; }\nP0(int *x) {\n  *x = 1;\n}\nexists (x=1)\n");
    assert!(
        e.message.contains("location 'x' is initialised twice"),
        "{e}"
    );
}

#[test]
fn distinct_registers_and_threads_are_accepted() {
    for src in [
        "X86 D\n{ 0:EAX=x; 1:EAX=y; 0:EBX=y; }\n P0 | P1 ;\n MOV [EAX],$1 | MOV [EAX],$1 ;\nexists (x=1)\n",
        "X86_64 D\n{ 0:rax=x; 0:rbx=y; }\n P0 ;\n movq $1,(%rax) ;\nexists (x=1)\n",
    ] {
        parse("t.litmus", src).unwrap_or_else(|e| panic!("{e}"));
    }
}
