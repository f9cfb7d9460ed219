/* Fixture for tests/audit_fixtures.rs: calls rare_forms in asm_a64.S. */
void rare_forms(void);
int main(void) { rare_forms(); return 0; }
