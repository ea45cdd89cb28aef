/* Umbrella for the process-level facilities every tool shares, one header per concept:
 * settings.h (settings and clocks), infile.h (inputs), outfile.h (outputs), jsonout.h (JSON
 * reports), junit.h (JUnit XML), term.h (colour, progress). New code includes what it uses. */
#ifndef GOLDEN_REPORT_H
#define GOLDEN_REPORT_H
#include "golden/settings.h"
#include "golden/infile.h"
#include "golden/outfile.h"
#include "golden/jsonout.h"
#include "golden/junit.h"
#include "golden/term.h"
#endif
