/*-------------------------------------------------------------------------
 *
 * stats_persist.h
 *		Per-lock statistics across a clean restart (stats_persist.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_STATS_PERSIST_H
#define SYNC_STATS_PERSIST_H

extern void sync_stats_persist_init(void);

#endif							/* SYNC_STATS_PERSIST_H */
