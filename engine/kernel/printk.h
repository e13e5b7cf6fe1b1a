/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/printk.h - the kernel's pr_*() for uflush: messages go to stderr,
 * or to the callback set with uf_set_log_fn() (include/uflush.h).
 */
#ifndef UF_PRINTK_H
#define UF_PRINTK_H

enum uf_loglevel {
	UF_LOG_ERR = 3,
	UF_LOG_WARNING = 4,
	UF_LOG_NOTICE = 5,
	UF_LOG_INFO = 6,
	UF_LOG_DEBUG = 7,
};

__attribute__((format(printf, 2, 3)))
void uf_printk(int level, const char *fmt, ...);

#define pr_err(...)	uf_printk(UF_LOG_ERR, __VA_ARGS__)
#define pr_warn(...)	uf_printk(UF_LOG_WARNING, __VA_ARGS__)
#define pr_notice(...)	uf_printk(UF_LOG_NOTICE, __VA_ARGS__)
#define pr_info(...)	uf_printk(UF_LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	uf_printk(UF_LOG_DEBUG, __VA_ARGS__)

#endif /* UF_PRINTK_H */
