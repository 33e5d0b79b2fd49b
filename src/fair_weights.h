/*-------------------------------------------------------------------------
 *
 * fair_weights.h
 *		The weights of fair keys (fair_weights.c): reading them from
 *		sync_fair_weight, and carrying a transaction's changes into the
 *		queues when it commits.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_FAIR_WEIGHTS_H
#define SYNC_FAIR_WEIGHTS_H

extern int32 sync_fair_weight_of(const char *lock_name, const char *fair_key);
extern int32 sync_fair_request_weight(char **names, int nnames,
									  const char *fair_key);
extern void sync_fair_weights_changed(void);
extern bool sync_fair_weights_pending(void);
extern void sync_fair_weights_precommit(void);
extern void sync_fair_weights_at_commit(void);
extern void sync_fair_weights_forget(void);

#endif							/* SYNC_FAIR_WEIGHTS_H */
