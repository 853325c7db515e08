/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The test runner of the standalone build: runs the ns-3 TestSuites compiled into this binary.
// CTest calls it once per suite (--suite=NAME); --list prints the suites.

#include "ns3/test.h"

int
main(int argc, char** argv)
{
    return ns3::TestRunner::Run(argc, argv);
}
