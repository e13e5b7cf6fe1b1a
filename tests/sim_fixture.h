/* SPDX-License-Identifier: MIT */
/*
 * tests/sim_fixture.h - the modelled-device fixture of the sim suites
 * (tests/test_sim.c, tests/test_simdisk.c): a timing model from a spec,
 * and one named sim device opened through uf_bdev, closed and destroyed
 * by sim_dev_fini (a criterion .fini).
 */
#ifndef UF_TESTS_SIM_FIXTURE_H
#define UF_TESTS_SIM_FIXTURE_H

#include "io/io.h"
#include "io/sim.h"
#include "uflush.h"

/* The device sim_dev_make made, and its open bdev (NULL: none). */
extern struct uf_sim *t_sim;
extern struct uf_bdev *t_bdev;

/* Parse spec and init the model from it, asserting both succeed. */
void sim_model_open(struct uf_sim_model *m, const char *spec);
/* Create the device "t-sim" from spec and open it with the engine sim. */
struct uf_bdev *sim_dev_make(const char *spec);
/* Open "t-sim" again (after sim_dev_close: a reboot). */
struct uf_bdev *sim_dev_open(void);
void sim_dev_close(void);
/* Close and destroy whatever is left. */
void sim_dev_fini(void);

#endif /* UF_TESTS_SIM_FIXTURE_H */
