/*-------------------------------------------------------------------------
 *
 * worker.h
 *		The background worker (worker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_WORKER_H
#define SYNC_WORKER_H

extern void sync_worker_register(void);

#endif							/* SYNC_WORKER_H */
