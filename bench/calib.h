/* SPDX-License-Identifier: MIT */
/*
 * bench/calib.h - `uflush-bench calib` (bench/calib.c): the comparison of
 * a sim device's run with a shaped loop device's repeats, apart so that
 * the tests can check it (tests/test_sim.c, sim_calib).
 */
#ifndef UF_BENCH_CALIB_H
#define UF_BENCH_CALIB_H

#include <stdbool.h>

/*
 * The band a metric of the sim must fall in: the median of the real
 * repeats, +- the larger of their full range (max - min) and a floor
 * (rel_floor x |median|, and abs_floor): three repeats of a noisy run can
 * happen to agree closely, and the floor is what the repeats spread by
 * when measured many times (README, "Calibration").  NAN values among the
 * repeats are ignored; with none left the band is NAN and nothing is in it.
 */
struct calib_band {
	double median, lo, hi, half;
	unsigned int n;
};

void calib_band(const double *real, unsigned int n, double rel_floor,
		double abs_floor, struct calib_band *b);
bool calib_in_band(const struct calib_band *b, double sim);
/* The median of the non-NAN values (NAN if none). */
double calib_median(const double *v, unsigned int n);

#endif /* UF_BENCH_CALIB_H */
