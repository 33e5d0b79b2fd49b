/*-------------------------------------------------------------------------
 *
 * client_wait.h
 *		Sleeping on this process's latch while also noticing that its client
 *		went away (client_wait.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_CLIENT_WAIT_H
#define SYNC_CLIENT_WAIT_H

extern void sync_sleep(long timeout_ms, uint32 wait_event_info);

#endif							/* SYNC_CLIENT_WAIT_H */
