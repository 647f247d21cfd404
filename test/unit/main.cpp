// doctest entry point for the unit-test binary; every test/unit/*.cpp registers its cases.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
