/*-------------------------------------------------------------------------
 *
 * controllers.h
 *		The controller registry (controllers.c): one slot per controller,
 *		its last heartbeat, and whether its pending entries are queued.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_CONTROLLERS_H
#define SYNC_CONTROLLERS_H

#include "datatype/timestamp.h"
#include "storage/lwlock.h"

#define SYNC_CONTROLLERS_TRANCHE	"syncwf controllers"

extern Size sync_controllers_shmem_size(void);
extern void sync_controllers_shmem_request(void);
extern void sync_controllers_shmem_init(void);
extern LWLock *sync_controllers_lock(void);
extern int	sync_controller_slot(const char *name, bool create);
extern int	sync_controller_slot_noerror(const char *name);
extern const char *sync_controller_name(int slot);
extern void sync_controller_ref(int slot);
extern void sync_controller_unref(int slot);
extern bool sync_controller_active(int slot);
extern void sync_controller_beat(int slot, TimestampTz at);
extern void sync_controller_restore(const char *name, TimestampTz heartbeat,
									TimestampTz now);
extern void sync_controller_deactivate(const char *name);
extern TimestampTz sync_controllers_check(TimestampTz now);

#endif							/* SYNC_CONTROLLERS_H */
