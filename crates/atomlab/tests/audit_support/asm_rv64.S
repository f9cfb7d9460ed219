/* Fixture for tests/audit_fixtures.rs: RV64A forms and fences GCC's
   builtins do not emit. */
	.text
	.globl	rare_forms
	.type	rare_forms, @function
rare_forms:
	.cfi_startproc
	fence.tso
	fence	r,rw
	fence	rw,w
	fence	i,o
	amomaxu.w.rl	a0, a1, (a2)
	amomin.d.aqrl	a0, a1, (a2)
	amoand.w	zero, a1, (a2)
	amoor.d.aq	a0, a1, (a2)
1:	lr.d.aqrl	a3, (a2)
	bne	a3, a1, 2f
	sc.d.rl	a4, a0, (a2)
	bnez	a4, 1b
2:	ret
	.cfi_endproc
	.size	rare_forms, .-rare_forms
