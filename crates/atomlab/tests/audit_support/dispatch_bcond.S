/* Fixture for tests/audit_dispatch.rs: LSE chosen at run time by a
   CPU-feature test that sets the flags (CMP or TST) and branches with
   B.cond, as compilers emit `if (flag)` as often as CBZ/CBNZ/TBZ.
   xadd: LSE falls through, B.EQ takes the LL/SC loop (40 instructions
   on); cas: B.NE takes the LSE arm, the LL/SC loop falls through.
   Built two ways (dispatch_goflag_main.c calls them):
   - plain: the flag byte dispatch_goflag_main.c sets from HWCAP,
     `ldrb; cmp w7, #0; b.eq|b.ne` (evidence flag-test);
   - with -DBCOND_HWCAP: getauxval(AT_HWCAP) called in place,
     `bl getauxval; tst x0, #HWCAP_ATOMICS; ...; b.eq|b.ne` (evidence
     getauxval), the saved arguments reloaded between the TST and the
     branch (loads do not set the flags).
   With CFI, so the stripped copy's functions come from .eh_frame; a PIE
   (Debian's default), whose functions main calls. */
	.arch	armv8-a+lse

/* Sets Z when the CPU has no LSE; keeps x0-x2 (the arguments). */
	.macro	feature_test
#ifdef BCOND_HWCAP
	stp	x29, x30, [sp, #-48]!
	.cfi_def_cfa_offset 48
	.cfi_offset 29, -48
	.cfi_offset 30, -40
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	str	x2, [sp, #32]
	mov	x0, #16			/* AT_HWCAP */
	bl	getauxval
	tst	x0, #(1 << 8)		/* HWCAP_ATOMICS */
	ldp	x0, x1, [sp, #16]
	ldr	x2, [sp, #32]
	ldp	x29, x30, [sp], #48
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
#else
	adrp	x9, has_atomics
	add	x9, x9, :lo12:has_atomics
	ldrb	w7, [x9]
	cmp	w7, #0
#endif
	.endm

	.text
	.globl	xadd
	.type	xadd, %function
xadd:
	.cfi_startproc
	feature_test
	b.eq	1f
	ldaddal	w1, w2, [x0]
	add	w0, w1, w2
	ret
	/* The fallback further than 24 instructions away, as Go places
	   the LL/SC arms of a function's inlined atomics at its end. */
	.rept	40
	nop
	.endr
1:	ldaxr	w2, [x0]
	add	w2, w2, w1
	stlxr	w3, w2, [x0]
	cbnz	w3, 1b
	mov	w0, w2
	ret
	.cfi_endproc
	.size	xadd, .-xadd

	.globl	cas
	.type	cas, %function
cas:
	.cfi_startproc
	feature_test
	b.ne	3f
2:	ldaxr	w3, [x0]
	cmp	w3, w1
	b.ne	4f
	stlxr	w4, w2, [x0]
	cbnz	w4, 2b
4:	cset	w0, eq
	ret
3:	mov	w3, w1
	casal	w3, w2, [x0]
	cmp	w3, w1
	cset	w0, eq
	ret
	.cfi_endproc
	.size	cas, .-cas
	.section	.note.GNU-stack,"",%progbits
