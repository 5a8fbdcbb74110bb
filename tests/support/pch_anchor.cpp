// The one source of heist_test_pch (tests/CMakeLists.txt): the target exists to compile the
// tests' precompiled header once; this file gives it something to compile.
