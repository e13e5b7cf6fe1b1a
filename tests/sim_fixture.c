// SPDX-License-Identifier: MIT
/*
 * tests/sim_fixture.c - the modelled-device fixture (tests/sim_fixture.h).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "sim_fixture.h"

struct uf_sim *t_sim;
struct uf_bdev *t_bdev;

void sim_model_open(struct uf_sim_model *m, const char *spec)
{
	struct uf_sim_config c;

	cr_assert_eq(uf_sim_config_parse(&c, spec), 0, "%s", spec);
	cr_assert_eq(uf_sim_model_init(m, &c), 0, "%s", spec);
}

struct uf_bdev *sim_dev_open(void)
{
	struct uf_bdev_config cfg;
	int ret;

	uf_bdev_config_init(&cfg);
	cfg.engine = "sim";
	ret = uf_bdev_open("t-sim", &cfg, &t_bdev);
	cr_assert_eq(ret, 0, "open: %s", strerror(-ret));
	cr_assert_str_eq(uf_bdev_engine_name(t_bdev), "sim");
	return t_bdev;
}

void sim_dev_close(void)
{
	cr_assert_eq(uf_bdev_close(t_bdev), 0);
	t_bdev = NULL;
}

struct uf_bdev *sim_dev_make(const char *spec)
{
	int ret = uf_sim_create("t-sim", spec, &t_sim);

	cr_assert_eq(ret, 0, "create %s: %s", spec, strerror(-ret));
	return sim_dev_open();
}

void sim_dev_fini(void)
{
	if (t_bdev)
		uf_bdev_close(t_bdev);
	t_bdev = NULL;
	if (t_sim)
		uf_sim_destroy(t_sim);
	t_sim = NULL;
}
