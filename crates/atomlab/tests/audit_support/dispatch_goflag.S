/* Fixture for tests/audit_dispatch.rs: Go's way to choose LSE at run time.
   Go's runtime/internal/atomic (Xadd) loads the CPU-feature byte, CBZ to an
   LL/SC loop, else LDADDAL; Go's compiler inlines CAS as a byte load, TBZ
   to an LL/SC loop, else CASAL. Both through a register other than the
   ADRP's, as Go's linker emits (not libgcc's helper shape). No CFI: like a
   Go binary, the functions are known only from .gopclntab, written here in
   Go 1.18's layout (runtime/symtab.go: pcHeader, functab, _func); link
   with -no-pie so that its addresses are in the section itself. */
	.arch	armv8-a+lse
	.text
	.globl	xadd
	.type	xadd, %function
xadd:
	adrp	x9, has_atomics
	add	x9, x9, :lo12:has_atomics
	ldrb	w4, [x9]
	cbz	w4, 1f
	ldaddal	w1, w2, [x0]
	add	w0, w1, w2
	ret
1:	ldaxr	w2, [x0]
	add	w2, w2, w1
	stlxr	w3, w2, [x0]
	cbnz	w3, 1b
	mov	w0, w2
	ret
	.size	xadd, .-xadd

	.globl	cas
	.type	cas, %function
cas:
	adrp	x9, has_atomics
	add	x9, x9, :lo12:has_atomics
	ldrb	w7, [x9]
	tbz	w7, #0, 2f
	mov	w3, w1
	casal	w3, w2, [x0]
	cmp	w3, w1
	cset	w0, eq
	ret
2:	ldaxr	w3, [x0]
	cmp	w3, w1
	b.ne	3f
	stlxr	w4, w2, [x0]
	cbnz	w4, 2b
3:	cset	w0, eq
	ret
	.size	cas, .-cas
cas_end:

	.section	.gopclntab,"a"
	.balign	8
pclntab:
	.word	0xfffffff0		/* magic: Go 1.18 */
	.byte	0, 0, 4, 8		/* pad, pad, minLC, ptrSize */
	.quad	2			/* nfunc */
	.quad	0			/* nfiles */
	.quad	xadd			/* textStart */
	.quad	funcnames - pclntab	/* funcnameOffset */
	.quad	0, 0, 0			/* cuOffset, filetabOffset, pctabOffset */
	.quad	functab - pclntab	/* pclnOffset */
funcnames:
	.asciz	"runtime/internal/atomic.Xadd"
name_cas:
	.asciz	"runtime/internal/atomic.Cas"
	.balign	4
functab:				/* entry offset, _func offset */
	.word	0, func0 - functab
	.word	cas - xadd, func1 - functab
	.word	cas_end - xadd, 0
func0:					/* entryOff, nameOff */
	.word	0, 0
func1:
	.word	cas - xadd, name_cas - funcnames
	.section	.note.GNU-stack,"",%progbits
