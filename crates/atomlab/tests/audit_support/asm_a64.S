/* Fixture for tests/audit_fixtures.rs: A64 forms compilers rarely emit.
   Assemble with -march=armv8.4-a+rcpc (LSE, RCpc, RCpc2, LOR). */
	.text
	.globl	rare_forms
	.type	rare_forms, %function
rare_forms:
	.cfi_startproc
	caspal	x0, x1, x2, x3, [x4]
	casp	w0, w1, w2, w3, [x4]
	stadd	w0, [x1]
	staddl	x0, [x1]
	stsetlb	w0, [x1]
	ldsmaxal x0, x1, [x2]
	lduminh	w0, w1, [x2]
	swpab	w0, w1, [x2]
	ldapr	w0, [x1]
	ldaprb	w0, [x1]
	ldapur	x0, [x1, #8]
	stlur	w0, [x1, #4]
	ldlar	x0, [x1]
	stllr	w0, [x1]
1:	ldaxp	x2, x3, [x4]
	stlxp	w5, x2, x3, [x4]
	cbnz	w5, 1b
2:	ldxrh	w2, [x4]
	add	w2, w2, #1
	stxrh	w5, w2, [x4]
	cbnz	w5, 2b
	dmb	oshld
	dmb	ishst
	dsb	sy
	isb
	ret
	.cfi_endproc
	.size	rare_forms, .-rare_forms
