/*-------------------------------------------------------------------------
 *
 * syncwf.c
 *		Module load: refuses to load unless preloaded, defines the GUCs and
 *		installs the shared memory hooks.
 *
 * Copyright (c) 2026, the syncwf authors.  PostgreSQL licence: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "syncwf.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
syncwf_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	sync_shmem_request();
}

static void
syncwf_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	sync_shmem_startup();
}

void
_PG_init(void)
{
	/*
	 * Locks live in shared memory, which can only be set up at server start.
	 * Refusing to load otherwise makes CREATE EXTENSION, and every function
	 * of an extension created earlier, fail with this message.
	 */
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("syncwf must be loaded via shared_preload_libraries"),
				 errhint("Add 'syncwf' to shared_preload_libraries in postgresql.conf "
						 "(for example: ALTER SYSTEM SET shared_preload_libraries = 'syncwf'), "
						 "then restart the server.")));

	sync_define_gucs();
	sync_worker_register();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = syncwf_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = syncwf_shmem_startup;
}
