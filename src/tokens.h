/*-------------------------------------------------------------------------
 *
 * tokens.h
 *		Fencing tokens that never go backwards (tokens.c), and the atomic
 *		counters that only move one way, which other files share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_TOKENS_H
#define SYNC_TOKENS_H

#include "port/atomics.h"

extern Size sync_tokens_shmem_size(void);
extern void sync_tokens_shmem_request(void);
extern void sync_tokens_shmem_init(void);
extern void sync_tokens_register_rmgr(void);
extern uint64 sync_next_token(void);
extern bool sync_tokens_confirm(uint64 token);
extern void sync_tokens_note_commit(void);
extern bool sync_commits_replicated(bool wait);
extern void sync_tokens_advance(uint64 next);
extern void sync_atomic_advance(pg_atomic_uint64 *counter, uint64 next);
extern bool sync_atomic_lower(pg_atomic_uint64 *counter, uint64 value);

#endif							/* SYNC_TOKENS_H */
