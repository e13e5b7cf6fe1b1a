// SPDX-License-Identifier: MIT
/*
 * tests/stress/alloc.c - page allocation under a small cache: many threads
 * competing for few frames.
 */
#include "stress.h"

const struct st_scenario st_alloc_scenarios[] = {
	{ NULL, NULL, NULL },
};
