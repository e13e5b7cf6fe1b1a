// SPDX-License-Identifier: MIT
/*
 * policies/skipcount.c - skipcount=3.2, mainline: what a page that
 * ->writepage declines (redirty_page_for_writepage: here a page the
 * embedder holds with UF_PAGE_WRITE, uflush's "locked buffer") costs.
 *
 * In both the page reaches the write step: write_cache_pages() charges
 * it to wbc->nr_to_write like a written page (3.2 decrements after every
 * writepage call; mainline's writeback_iter() after every folio it hands
 * out), wbc->pages_skipped counts it, and the redirty marks the inode
 * I_DIRTY_PAGES again (__set_page_dirty_nobuffers -> __mark_inode_dirty).
 *
 *   3.2       (3.2.41 mm/page-writeback.c redirty_page_for_writepage,
 *             write_cache_pages; fs/fs-writeback.c writeback_sb_inodes):
 *             the redirty is a fresh dirtying (NR_DIRTIED, BDI_DIRTIED
 *             grow), and writeback_sb_inodes counts the page as progress,
 *             so skipped pages can use up the slice and look like work.
 *   mainline  (folio_redirty_for_writepage -> folio_account_redirty;
 *             writeback_sb_inodes "wrote = write_chunk - nr_to_write -
 *             pages_skipped"): the dirtied counts are taken back and the
 *             skipped pages are not progress.
 */
#include "policies/policy.h"

DEFINE_WB_VARIANT(skipcount_32, "skipcount", "3.2",
		  "3.2 redirty_page_for_writepage: counted as written",
		  skipcount_mainline, false);

DEFINE_WB_VARIANT(skipcount_mainline, "skipcount", "mainline",
		  "mainline folio_redirty_for_writepage: not progress",
		  skipcount_mainline, true);
