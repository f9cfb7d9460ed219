/* Fixture for tests/audit_fixtures.rs: calls a helper through the PLT. */
#include <stdint.h>
uint32_t counter;
__attribute__((noinline)) uint32_t bump(uint32_t v) { return __atomic_fetch_add(&counter, v, __ATOMIC_ACQ_REL); }
int main(int argc, char **argv) { (void)argv; return (int)bump((uint32_t)argc); }
