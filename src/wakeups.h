/*-------------------------------------------------------------------------
 *
 * wakeups.h
 *		Waking the backends that wait for a holder's keyed entries
 *		(wakeups.c): who waits for which holder, and the wake-up sent when
 *		one of its entries is granted or freed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_WAKEUPS_H
#define SYNC_WAKEUPS_H

extern Size sync_wakeups_shmem_size(void);
extern void sync_wakeups_shmem_init(void);

extern void sync_wakeup_join(Oid dbid, const char *holder);
extern void sync_wakeup_leave(void);
extern void sync_holder_changed(Oid dbid, const char *holder);

#endif							/* SYNC_WAKEUPS_H */
