// SPDX-License-Identifier: MIT
/*
 * tests/stress/handles.c - handle lifetimes under concurrency: calls that
 * race with the close of the handle they use.
 */
#include "stress.h"

const struct st_scenario st_handle_scenarios[] = {
	{ NULL, NULL, NULL },
};
