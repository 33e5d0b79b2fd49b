/*-------------------------------------------------------------------------
 *
 * guc.h
 *		The configuration parameters of syncwf (guc.c), and the one question
 *		about them every layer asks: is this the database of keyed holds?
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_GUC_H
#define SYNC_GUC_H

extern int	sync_max_locks;
extern int	sync_max_entries;
extern int	sync_max_holders;
extern int	sync_max_controllers;
extern char *sync_database;
extern int	sync_inactive_controller_timeout;
extern bool sync_worker_enabled;
extern bool sync_handoff_in_transaction;
extern int	sync_max_passes;
extern bool sync_track_stats;
extern int	sync_stats_max_locks;

extern void sync_define_gucs(void);
extern bool sync_keyed_database(void);

#endif							/* SYNC_GUC_H */
