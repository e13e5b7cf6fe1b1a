/* SPDX-License-Identifier: MIT */
/*
 * tests/crash/crashloop.h - what uflush-crashloop's kill loop
 * (crashloop.c) and its power-cut loop (crashloop_sim.c) share: the
 * workload's generator, the device's layout and the policies it runs.
 */
#ifndef UF_TESTS_CRASHLOOP_H
#define UF_TESTS_CRASHLOOP_H

#include <stddef.h>
#include <stdint.h>

#define PG		4096u
#define NFILES		4
#define FILE_SIZE	(2u << 20)
#define DEV_SIZE	((uint64_t)NFILES * FILE_SIZE)
#define DEV_PAGES	(DEV_SIZE / PG)
#define FILE_PAGES	(FILE_SIZE / PG)
#define BIG_WRITE	(64u << 10)
#define MAX_WRITE	(1u << 20)

extern const char *const policies[];
extern const size_t nr_policies;

uint64_t rng_next(uint64_t *s);
uint64_t rng_below(uint64_t *s, uint64_t n);
/* The bytes a write of version ver puts at device offset off. */
void gen_fill(uint8_t *buf, uint64_t off, size_t len, uint32_t ver);

/* uflush-crashloop --sim ...: the power-cut loop; its exit status. */
int crashloop_sim_main(int argc, char **argv);

#endif /* UF_TESTS_CRASHLOOP_H */
