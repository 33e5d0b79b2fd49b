/*-------------------------------------------------------------------------
 *
 * keyed_events.h
 *		The NOTIFY events of keyed holds (keyed_events.c): their payload,
 *		and the channels they go out on.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_KEYED_EVENTS_H
#define SYNC_KEYED_EVENTS_H

/* The channel of every event of keyed holds. */
#define SYNC_NOTIFY_CHANNEL		"syncwf"

extern void sync_controller_channel(const char *controller, char *channel);
extern void sync_keyed_notify(const char *event, const char *name,
							  const char *holder, int64 token,
							  const char *controller, const char *reason);

#endif							/* SYNC_KEYED_EVENTS_H */
