/* Fixture for tests/audit_packages.rs: a program with no atomics. */
int main(int argc, char **argv) { (void)argv; return argc > 1; }
