/* SPDX-License-Identifier: MIT */
/*
 * engine/lib/errseq.h - lib/errseq.c: an error number and a sequence in one
 * word, so that each opener of a file sees a writeback error exactly once.
 *
 * The mapping records errors with errseq_set(); each struct uf_file samples
 * the word when opened and errseq_check_and_advance() at fsync tells it
 * whether an error happened since its last look, then moves its sample on.
 * The word's layout is the kernel's idea (low bits errno, one "seen" flag,
 * the rest a counter), reimplemented.
 */
#ifndef UF_ERRSEQ_H
#define UF_ERRSEQ_H

#include <stdint.h>

typedef uint32_t errseq_t;

/* Record err (negative errno).  Returns the new value. */
errseq_t errseq_set(errseq_t *eseq, int err);
/* The value to remember at open: errors before it are not reported. */
errseq_t errseq_sample(errseq_t *eseq);
/* 0 if nothing new since *since, else the negative errno. */
int errseq_check(errseq_t *eseq, errseq_t since);
/* Like errseq_check, and advance *since so the error is reported once. */
int errseq_check_and_advance(errseq_t *eseq, errseq_t *since);

#endif /* UF_ERRSEQ_H */
