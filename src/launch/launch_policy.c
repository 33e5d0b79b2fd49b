/*-------------------------------------------------------------------------
 *
 * launch_policy.c
 *		Launch-plan concurrency policies (Flyte's WAIT / ABORT / REPLACE /
 *		SKIP) over versioned launch plans and their executions, built on
 *		keyed holds (keyed_ops.c): creating and moving executions, promotion,
 *		and reconciliation.  The SQL functions are in sql_launch.c, the
 *		rows in launch_heap.c (the hot path) and launch_spi.c.
 *
 * Each launch plan name (project, domain, name) is the semaphore
 *		sem/launchplan/<project>/<domain>/<name>
 * whose keyed holders are execution ids, so its slots show in sync_locks,
 * sync_holders and sync_waiters beside every other lock.  The semaphore
 * needs no sync_limit row (a row 'launchplan/<project>/<domain>/<name>'
 * would set an overall cap); each execution's request carries the limit of
 * the version it launches (SyncEntry.admit_limit).  So the count is
 * version-agnostic (every holder of the plan's semaphore) and the
 * enforcement version-specific (the request's own limit), as Flyte's page
 * describes.  A plan registered in a transaction can be launched in it.
 *
 * Phases, by rank (a phase never goes to a lower rank; terminal is final):
 *	0 PENDING (waiting for a slot; holds none)
 *	1 QUEUED, 2 RUNNING, 3 SUCCEEDING / FAILING / ABORTING (hold a slot)
 *	4 SUCCEEDED / FAILED / ABORTED / TIMED_OUT (terminal; slot released)
 * An execution moved to ABORTING by a REPLACE has lost its slot already.
 *
 * A pending execution is promoted to QUEUED when its keyed request is
 * granted: keyed_ops.c calls sync_launch_grant_written() (through the hook
 * syncwf.c sets) when it writes the grant (the worker, sync_reconcile(), or
 * a repeated request), in the same transaction as the row and the NOTIFY.
 *
 * Events (skip, abort, replace, promotion, time-out) are rows of
 * sync_launch_event and NOTIFYs on channel "syncwf_launch" (JSON).
 *
 * No state and no lock of its own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/value.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "launch/launch_internal.h"

const char *const sync_phase_names[PH_COUNT] = {
	"PENDING", "QUEUED", "RUNNING", "SUCCEEDING", "FAILING", "ABORTING",
	"SUCCEEDED", "FAILED", "ABORTED", "TIMED_OUT"
};
static const int phase_rank[PH_COUNT] = {0, 1, 2, 3, 3, 3, 4, 4, 4, 4};

#define PHASE_TERMINAL(p)	(phase_rank[p] == 4)

/*
 * The phase called 'name' (in any case).  An unknown name is an error if
 * 'must', else PH_COUNT.
 */
LaunchPhase
sync_phase_of(const char *name, bool must)
{
	for (int i = 0; i < PH_COUNT; i++)
		if (pg_strcasecmp(name, sync_phase_names[i]) == 0)
			return (LaunchPhase) i;
	if (must)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown execution phase \"%s\"", name),
				 errhint("Phases are PENDING, QUEUED, RUNNING, SUCCEEDING, SUCCEEDED, FAILING, FAILED, ABORTING, ABORTED and TIMED_OUT.")));
	return PH_COUNT;
}

/* Is 'phase' final (SUCCEEDED, FAILED, ABORTED, TIMED_OUT)? */
bool
sync_phase_terminal(LaunchPhase phase)
{
	return phase < PH_COUNT && PHASE_TERMINAL(phase);
}

/*
 * Move an execution to 'phase'.  set_reason: replace its reason with
 * 'reason' (NULL clears it); otherwise keep the reason it has.
 */
static void
sync_set_phase(const char *execution_id, LaunchPhase phase, bool set_reason,
			   const char *reason)
{
	(void) sync_execution_move(execution_id, NULL, sync_phase_names[phase],
							   PHASE_TERMINAL(phase), set_reason, reason, NULL);
}

/* The name of the semaphore of launch plan project/domain/name. */
static char *
sync_plan_lock(const char *project, const char *domain, const char *name)
{
	return psprintf("%s%s/%s/%s", SYNC_LAUNCH_LOCK_PREFIX, project, domain, name);
}

/*
 * Request the plan's semaphore (one slot) for an execution; see
 * keyed_request.c for modes.
 */
static SyncKeyedResult
sync_take_slot(const char *lock, const char *execution_id, SyncKeyedMode mode,
			   int32 limit, int32 priority, TimestampTz order_at)
{
	SyncKeyedResult result;
	SyncKeyedRequest kr;
	char	   *names[1];

	names[0] = (char *) lock;
	memset(&result, 0, sizeof(result));
	memset(&kr, 0, sizeof(kr));
	kr.names = names;
	kr.nnames = 1;
	kr.holder = execution_id;
	kr.mode = mode;
	kr.admit_limit = limit;
	kr.slots = 1;
	kr.has_priority = true;
	kr.priority = priority;
	kr.has_queued_at = true;
	kr.queued_at = order_at;
	sync_keyed_request(&kr, &result);
	return result;
}

/*
 * If execution 'id' exists, fill *res with its state and return true; an
 * id of another launch plan is an error.
 */
static bool
sync_existing_execution(const char *id, const char *project, const char *domain,
						const char *name, CreateResult *res)
{
	SyncExecutionRow row;

	if (!sync_execution_read(id, &row))
		return false;
	if (strcmp(row.project, project) != 0 || strcmp(row.domain, domain) != 0 ||
		strcmp(row.name, name) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("execution \"%s\" already exists for launch plan %s/%s/%s",
						id, row.project, row.domain, row.name),
				 errhint("Execution ids are unique across launch plans; use a new id.")));
	memset(res, 0, sizeof(CreateResult));
	res->phase = sync_phase_of(row.phase, false);
	res->reason = row.reason;
	return true;
}

/*
 * One sync_launch_create() call: what it was asked, and what it found out
 * on the way (the version's policy, the queue order it implies).
 */
typedef struct LaunchCall
{
	const char *project;
	const char *domain;
	const char *name;
	const char *version;
	const char *id;
	int32		priority;
	bool		raise;			/* refusal is an error */
	char	   *lock;			/* the plan's semaphore */
	TimestampTz now;			/* the execution's created_at */
	SyncLaunchPolicy policy;
	int32		order_priority; /* the slot request's place in the queue */
	TimestampTz order_at;
} LaunchCall;

/*
 * Insert the execution in 'phase' (with 'reason', or none) and return true;
 * false if a concurrent call created the same id first: then *res reports
 * that one instead, and the caller records nothing more.
 */
static bool
sync_insert_or_report(const LaunchCall *c, LaunchPhase phase,
					  const char *reason, CreateResult *res)
{
	SyncExecutionNew e = {
		.id = c->id, .project = c->project, .domain = c->domain,
		.name = c->name, .version = c->version,
		.phase = sync_phase_names[phase],
		.queued = phase == PH_QUEUED, .terminal = PHASE_TERMINAL(phase),
		.reason = reason, .priority = c->priority, .created = c->now
	};

	if (sync_execution_insert(&e))
		return true;
	(void) sync_existing_execution(c->id, c->project, c->domain, c->name, res);
	return false;
}

/* A refusal, when the caller asked for one to be an error. */
static void
sync_limit_reached(bool raise, const char *reason)
{
	if (raise)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("%s", reason),
				 errhint("Retry later, or call sync_execution_create() without raise_on_limit to have the outcome recorded.")));
}

/*
 * Read the version's policy into c->policy, and the queue order its
 * scheduling gives the execution's slot request; an unregistered version is
 * an error.
 */
static void
sync_launch_read_policy(LaunchCall *c)
{
	if (!sync_launch_policy_read(c->project, c->domain, c->name, c->version,
								 &c->policy))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("launch plan %s/%s/%s version \"%s\" is not registered",
						c->project, c->domain, c->name, c->version),
				 errhint("Register it first: SELECT sync_launch_plan_register('%s', '%s', '%s', '%s', ...);",
						 c->project, c->domain, c->name, c->version)));
	c->order_priority = 0;
	c->order_at = c->now;
	if (!c->policy.has_policy)
		return;
	if (strcmp(c->policy.scheduling, "PRIORITY") == 0)
		c->order_priority = c->priority;
	else if (strcmp(c->policy.scheduling, "LIFO") == 0)
		c->order_at = -c->now;	/* newest first: the queue key is negated */
}

/*
 * A version without a policy: the execution is QUEUED at once.  If other
 * versions of the plan have a policy, it takes a slot all the same (never
 * refused), so that it counts for them: counting is version-agnostic.
 */
static void
sync_launch_unlimited(const LaunchCall *c, CreateResult *res)
{
	if (sync_launch_tracked(c->project, c->domain, c->name))
		(void) sync_take_slot(c->lock, c->id, SYNC_KEYED_FORCE, -1, 0, c->now);
	if (sync_insert_or_report(c, PH_QUEUED, NULL, res))
		res->phase = PH_QUEUED;
}

/*
 * WAIT and no free slot: the execution is PENDING, its slot request queued,
 * until a slot frees (sync_launch_grant_written) or max_pending passes.
 */
static void
sync_launch_pending(const LaunchCall *c, CreateResult *res)
{
	res->phase = PH_PENDING;
	res->reason = psprintf("Waiting for a slot: concurrency limit (%d) reached for launch plan %s/%s/%s",
						   c->policy.max_concurrency, c->project, c->domain, c->name);
	if (!sync_insert_or_report(c, PH_PENDING, res->reason, res))
		return;

	/*
	 * Its max_pending deadline: the worker looks for deadlines when this
	 * commits (not before: it cannot see the row yet).
	 */
	if (c->policy.has_max_pending)
		sync_keyed_wake_at_commit();
}

/*
 * REPLACE and no free slot: the oldest execution holding a slot is moved to
 * ABORTING and gives its slot to this one, which is QUEUED.  Returns false
 * if there is none to replace (a limit of 0); else *res is the outcome.
 */
static bool
sync_launch_replace(const LaunchCall *c, CreateResult *res)
{
	char	   *victim;
	char	   *why;

	victim = sync_launch_oldest_active(c->project, c->domain, c->name, c->lock);
	if (victim == NULL)
	{
		/*
		 * The execution it found was replaced by a concurrent call that
		 * committed while we waited for its row lock; that call's own
		 * execution is only visible to a new statement.
		 */
		victim = sync_launch_oldest_active(c->project, c->domain, c->name, c->lock);
	}
	if (victim == NULL)
		return false;

	why = psprintf("Replaced by execution %s: concurrency limit (%d) reached for launch plan %s/%s/%s",
				   c->id, c->policy.max_concurrency, c->project, c->domain, c->name);
	sync_set_phase(victim, PH_ABORTING, true, why);
	(void) sync_keyed_delete(c->lock, victim, "replaced");
	/* the slot it held is ours: taken over, not queued for */
	(void) sync_take_slot(c->lock, c->id, SYNC_KEYED_FORCE, c->policy.max_concurrency,
						  c->order_priority, c->order_at);
	if (!sync_insert_or_report(c, PH_QUEUED, NULL, res))
		return true;
	sync_launch_event("REPLACED", c->id, c->project, c->domain, c->name,
					  c->version, why, victim);
	res->phase = PH_QUEUED;
	res->reason = NULL;
	res->replaced = victim;
	return true;
}

/*
 * No free slot, and the behavior does not wait: REPLACE an execution, or
 * refuse this one (an error if c->raise): ABORT records it FAILED, SKIP
 * records none; both record an event.
 */
static void
sync_launch_refused(const LaunchCall *c, CreateResult *res)
{
	const char *behavior = c->policy.behavior;

	res->reason = psprintf("Concurrency limit (%d) reached for launch plan %s/%s/%s",
						   c->policy.max_concurrency, c->project, c->domain, c->name);
	if (strcmp(behavior, "REPLACE") == 0)
	{
		if (sync_launch_replace(c, res))
			return;
		/* nothing to replace (a limit of 0): refused like ABORT */
		res->reason = psprintf("%s; no running execution to replace", res->reason);
		behavior = "ABORT";
	}

	sync_limit_reached(c->raise, res->reason);
	if (strcmp(behavior, "ABORT") == 0)
	{
		if (!sync_insert_or_report(c, PH_FAILED, res->reason, res))
			return;
		sync_launch_event("ABORTED", c->id, c->project, c->domain, c->name,
						  c->version, res->reason, NULL);
		res->phase = PH_FAILED;
		return;
	}
	/* SKIP: no execution, an event */
	sync_launch_event("SKIPPED", c->id, c->project, c->domain, c->name,
					  c->version, res->reason, NULL);
	res->skipped = true;
}

/*
 * sync_execution_create(): create execution 'id' of a plan version under
 * its policy (see the README's launch-plan guide), or report the one that
 * exists.
 */
CreateResult
sync_launch_create(const char *project, const char *domain, const char *name,
				   const char *version, const char *id, int32 priority,
				   bool raise)
{
	CreateResult res;
	LaunchCall	c;
	SyncKeyedResult slot;

	memset(&res, 0, sizeof(res));
	memset(&c, 0, sizeof(c));
	c.project = project;
	c.domain = domain;
	c.name = name;
	c.version = version;
	c.id = id;
	c.priority = priority;
	c.raise = raise;
	c.lock = sync_plan_lock(project, domain, name);
	c.now = GetCurrentTimestamp();

	/* An existing execution: report it, change nothing. */
	if (sync_existing_execution(id, project, domain, name, &res))
		return res;

	sync_launch_read_policy(&c);
	if (!c.policy.has_policy)
	{
		sync_launch_unlimited(&c, &res);
		return res;
	}

	slot = sync_take_slot(c.lock, id,
						  strcmp(c.policy.behavior, "WAIT") == 0 ? SYNC_KEYED_QUEUE : SYNC_KEYED_TRY,
						  c.policy.max_concurrency, c.order_priority, c.order_at);
	if (slot.held)
	{
		if (sync_insert_or_report(&c, PH_QUEUED, NULL, &res))
			res.phase = PH_QUEUED;
	}
	else if (!slot.refused)
		sync_launch_pending(&c, &res);	/* WAIT: pending until a slot frees */
	else
		sync_launch_refused(&c, &res);
	return res;
}

/*
 * Give up an execution's slot (or its place in the queue), if it has one.
 * The caller checked that it may act on the execution.
 */
static void
sync_drop_slot(const char *lock, const char *id)
{
	SyncKeyedInfo info;

	if (sync_keyed_lookup(lock, id, &info))
		(void) sync_keyed_delete(lock, id, SYNC_REASON_RELEASED);
}

/* sync_launch_update()'s decision on the row it found. */
typedef struct UpdateDecision
{
	const char *id;
	LaunchPhase want;
	LaunchPhase cur;			/* the phase found */
} UpdateDecision;

/*
 * sync_launch_update()'s SyncExecutionDecide: check that the caller may act
 * on the execution and that 'want' is a move forward from the phase it
 * found (an error if not), and say what to write (false: it is in that
 * phase already).
 */
static bool
decide_update(const SyncExecutionRow *row, void *arg, SyncExecutionMove *move)
{
	UpdateDecision *d = arg;
	const char *id = d->id;
	LaunchPhase want = d->want;
	LaunchPhase cur = sync_phase_of(row->phase, false);

	if (cur == PH_COUNT)
		cur = PH_QUEUED;		/* a phase written by hand: treat as queued */
	d->cur = cur;

	/* only the role that created it (a member, or an administrator) */
	if (OidIsValid(row->owner))
		sync_check_owner(row->owner, sync_plan_lock(row->project, row->domain, row->name), id);

	if (want == cur)
		return false;
	if (PHASE_TERMINAL(cur))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("execution \"%s\" is %s, which is final", id, sync_phase_names[cur]),
				 errhint("A terminal phase never changes.")));
	if (phase_rank[want] <= phase_rank[cur])
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("execution \"%s\" cannot go from %s back to %s", id,
						sync_phase_names[cur], sync_phase_names[want]),
				 errhint("Phases only move forward: PENDING, QUEUED, RUNNING, then SUCCEEDING, FAILING or ABORTING, then a terminal phase.")));
	if (cur == PH_PENDING && !PHASE_TERMINAL(want))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("execution \"%s\" is waiting for a slot", id),
				 errdetail("A PENDING execution becomes QUEUED when its launch plan has a free slot."),
				 errhint("To give up waiting, move it to ABORTED.")));

	/* leaving PENDING, the reason it waited no longer applies */
	move->phase = sync_phase_names[want];
	move->terminal = PHASE_TERMINAL(want);
	move->set_reason = (cur == PH_PENDING);
	move->reason = NULL;
	return true;
}

/*
 * sync_execution_update(): move execution 'id' to phase 'want'; a terminal
 * phase gives its slot back.  Returns the phase it is in.
 */
LaunchPhase
sync_launch_update(const char *id, LaunchPhase want)
{
	UpdateDecision d;
	SyncExecutionRow row;

	d.id = id;
	d.want = want;
	switch (sync_execution_change(id, decide_update, &d, &row))
	{
		case SYNC_EXECUTION_MISSING:
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("execution \"%s\" does not exist", id),
					 errhint("Create it with sync_execution_create().")));
			break;
		case SYNC_EXECUTION_KEPT:
			return d.cur;		/* already in that phase */
		case SYNC_EXECUTION_MOVED:
			if (PHASE_TERMINAL(want))
				sync_drop_slot(sync_plan_lock(row.project, row.domain, row.name), id);
			break;
	}
	return want;
}

/*-------------------------------------------------------------------------
 * Promotion and reconciliation
 *-------------------------------------------------------------------------
 */

/*
 * The keyed grant of lock 'name' to 'holder' has just been written (in
 * this transaction): if it is a launch plan's, its pending execution is
 * QUEUED now.  keyed_ops.c's hook.
 */
void
sync_launch_grant_written(const char *name, const char *holder)
{
	SyncExecutionRow row;

	if (!sync_lock_is_launch_plan(name))
		return;
	if (sync_execution_move(holder, "PENDING", "QUEUED", false, true, NULL, &row))
		sync_launch_event("PROMOTED", holder, row.project, row.domain, row.name,
						  row.version, NULL, NULL);
}

/*
 * Does the pending execution of 'row', whose version has a policy, wait
 * against another limit than its version's?
 */
static bool
sync_launch_limit_changed(const SyncLaunchRow *row)
{
	return !row->has_admit_limit || row->admit_limit != row->max_concurrency;
}

/*
 * Is there anything to do for this execution (a row of to_reconcile) in
 * sync_launch_reconcile(), given whether it has a keyed entry and whether
 * that entry holds a slot (row->has_entry, row->held)?
 */
static bool
sync_launch_needs_action(const SyncLaunchRow *row)
{
	if (PHASE_TERMINAL(row->phase))
		return row->has_entry;
	if (row->phase == PH_PENDING)
		return row->timed_out || !row->has_policy || !row->has_entry ||
			(!row->held && sync_launch_limit_changed(row));
	return !row->held && row->phase != PH_ABORTING && row->tracked;
}

/*
 * Lock the execution's row of 'row' first, without waiting, and return
 * whether there is still something to do for it.  One that a transaction
 * is changing (its phase, its slot), or that another round has changed
 * since we read it, is looked at again shortly (*busy is set), and the
 * worker never deadlocks with it.
 *
 * Another round may have acted on it and committed after we read it,
 * leaving its phase as it was (a RUNNING execution that took its slot).
 * Shared memory, updated at that commit before its locks were released,
 * says what holds now: row->has_entry and row->held are set from it.
 */
static bool
sync_launch_lock_row(SyncLaunchRow *row, bool *busy)
{
	SyncKeyedInfo info;

	if (!sync_launch_lock_if_free(row->execution_id, sync_phase_names[row->phase]))
	{
		*busy = true;
		return false;
	}
	row->has_entry = sync_keyed_lookup(row->lock, row->execution_id, &info);
	row->held = row->has_entry && info.state == SYNC_ENTRY_HELD;
	return sync_launch_needs_action(row);
}

/*
 * A pending execution that needs something (sync_launch_needs_action):
 * time it out, promote it if its version lost its policy, make it wait
 * against its version's new limit, or queue it again.  The caller has its
 * row locked.  Returns the number of changes; a lock whose waiters are to
 * be granted afterwards is added to *regrant.
 */
static int
sync_launch_fix_pending(const SyncLaunchRow *row, TimestampTz now,
						List **regrant)
{
	const char *id = row->execution_id;

	if (row->timed_out)
	{
		char	   *why = psprintf("Pending longer than max_pending (%s s) for launch plan %s/%s/%s",
								   row->max_pending_secs, row->project,
								   row->domain, row->name);

		if (row->has_entry)
			(void) sync_keyed_delete(row->lock, id, SYNC_REASON_RELEASED);
		sync_set_phase(id, PH_TIMED_OUT, true, why);
		sync_launch_event("TIMED_OUT", id, row->project, row->domain,
						  row->name, row->version, why, NULL);
		return 1;
	}
	if (!row->has_policy)
	{
		/*
		 * The version lost its policy: no longer waits.  It still counts
		 * (takes a slot, never refused) if another version of the plan has
		 * a policy.
		 */
		if (row->has_entry)
			(void) sync_keyed_delete(row->lock, id, SYNC_REASON_RELEASED);
		if (row->tracked)
			(void) sync_take_slot(row->lock, id, SYNC_KEYED_FORCE, -1, 0, now);
		sync_set_phase(id, PH_QUEUED, true, NULL);
		sync_launch_event("PROMOTED", id, row->project, row->domain,
						  row->name, row->version,
						  "the launch plan version has no concurrency policy any more", NULL);
		return 1;
	}
	if (row->has_entry && !row->held && sync_launch_limit_changed(row))
	{
		int32		limit = row->max_concurrency;

		/* granted by the caller, once every waiter has its new limit */
		sync_keyed_readmit(row->lock, id, limit, false);
		*regrant = list_append_unique(*regrant, makeString(row->lock));
		sync_set_phase(id, PH_PENDING, true,
					   psprintf("Waiting for a slot: concurrency limit (%d) reached for launch plan %s/%s/%s",
								limit, row->project, row->domain, row->name));
		return 1;
	}
	if (!row->has_entry)
	{
		/* queue it (again) */
		(void) sync_take_slot(row->lock, id, SYNC_KEYED_QUEUE,
							  row->max_concurrency, 0, now);
		return 1;
	}
	return 0;
}

/*
 * Repair the slot of the execution of 'row', which needs something
 * (sync_launch_needs_action): a terminal one gives its slot back, a pending
 * one is sync_launch_fix_pending()'s, an active one without a slot takes
 * one.  The caller has its row locked (if it still has one).  Returns the
 * number of changes.
 */
static int
sync_launch_fix_slot(const SyncLaunchRow *row, TimestampTz now, List **regrant)
{
	if (PHASE_TERMINAL(row->phase))
	{
		if (!row->has_entry)
			return 0;
		(void) sync_keyed_delete(row->lock, row->execution_id, SYNC_REASON_RELEASED);
		return 1;
	}
	if (row->phase == PH_PENDING)
		return sync_launch_fix_pending(row, now, regrant);

	/*
	 * Running without a slot (moved by hand): it takes one.  (An ABORTING
	 * execution without one was replaced: it gave its slot to its
	 * replacement.)
	 */
	if (row->held || row->phase == PH_ABORTING || !row->tracked)
		return 0;
	if (row->has_entry)
		(void) sync_keyed_delete(row->lock, row->execution_id, SYNC_REASON_RELEASED);
	(void) sync_take_slot(row->lock, row->execution_id, SYNC_KEYED_FORCE,
						  row->has_policy ? row->max_concurrency : -1, 0, now);
	return 1;
}

/*
 * One round of launch-plan maintenance (from sync_reconcile_round):
 *	- pending executions whose version lost its policy are QUEUED;
 *	- pending executions whose version's limit changed wait against the
 *	  new limit (a raised one grants at once);
 *	- pending executions older than max_pending are TIMED_OUT;
 *	- slots are repaired after direct updates of phases: a terminal
 *	  execution gives its slot back, an active one without a slot takes one.
 * Returns the number of changes; *next is the next time-out (DT_NOEND).
 */
int
sync_launch_reconcile(TimestampTz now, TimestampTz *next)
{
	List	   *rows;
	List	   *regrant = NIL;
	ListCell   *lc;
	int			n = 0;
	bool		busy = false;

	*next = DT_NOEND;
	if (!OidIsValid(sync_state_relid(true)))
		return 0;
	rows = sync_launch_to_reconcile();
	foreach(lc, rows)
	{
		SyncLaunchRow *row = (SyncLaunchRow *) lfirst(lc);

		if (row->phase == PH_COUNT || !sync_launch_needs_action(row))
			continue;
		/* a slot whose execution's row is gone has no row to lock */
		if (row->project != NULL && !sync_launch_lock_row(row, &busy))
			continue;
		n += sync_launch_fix_slot(row, now, &regrant);
	}

	foreach(lc, regrant)
		sync_grant_waiters_of(strVal(lfirst(lc)));
	if (busy)
		sync_launch_set_dirty();

	*next = sync_launch_next_deadline();
	if (busy)
		*next = Min(*next, now + USECS_PER_SEC / 10);
	return n;
}
