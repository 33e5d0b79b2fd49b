/*-------------------------------------------------------------------------
 *
 * tokens.c
 *		Fencing tokens: every grant gets a bigint strictly greater than every
 *		token handed out before it, by this server or by any primary before
 *		it -- across restarts, crashes, promotions, switchovers and
 *		failovers -- and the reservation that guarantees it, kept in a file
 *		and in WAL through syncwf's own resource manager.
 *
 * One counter serves every lock, so a token is also greater than every
 * earlier token of the same lock.  What keeps it from going backwards:
 *
 *	- a reservation: a value that no token handed out so far reaches.  A
 *	  backend about to hand out a token at or past it first reserves
 *	  SYNC_TOKEN_BLOCK (2^20) tokens further on: it durably writes the new
 *	  value to $PGDATA/syncwf.token (for a crash restart of this server,
 *	  whose redo may begin after the reservation's WAL record), then writes
 *	  a WAL record of syncwf's resource manager and flushes it (one flush
 *	  per block of grants).  A standby replays the record into its own
 *	  reservation and file, so it knows every token the primary may have
 *	  handed out once the record has reached it;
 *	- a promotion: the first token a server hands out once it is no longer
 *	  in recovery (after a start as a primary, or a promotion) is above the
 *	  largest reservation it knows (its file and every record it replayed)
 *	  and above the clock at that moment, in microseconds since 2000-01-01;
 *	- synchronous replication: a session or transaction hold's token is
 *	  returned to its client only once the reservation that covers it has
 *	  been acknowledged by the synchronous standbys, as a commit is
 *	  (sync_tokens_confirm(), with PostgreSQL's SyncRepWaitForLSN() on the
 *	  reservation record); a keyed grant's token is written in a commit
 *	  after that record, whose own wait covers it.  So a token handed out
 *	  by any primary is below every token of a later primary that was an
 *	  in-sync synchronous standby.  Without synchronous replication only
 *	  the records that reached the promoted standby, the clock at
 *	  promotion and the tokens of sync_state (keyed_load.c) keep the order.
 *
 * A standby hands out tokens only to its own session holds; they are above
 * every reservation it has replayed, but a primary may hand out the same
 * values: they order the standby's own holds only.
 *
 * A failure to write the file is logged, not raised: a grant may happen in
 * a commit callback where an error is not allowed; the WAL record and the
 * clock floor still protect the order.
 *
 * Tokens also fit in 53 bits, so that the JSON numbers of notifications
 * are exact where JSON numbers are doubles (JavaScript).  The counter only
 * moves by one per grant, and at each start or promotion to the larger of
 * the clock and the reservation (at most SYNC_TOKEN_BLOCK past the last
 * token handed out) plus one; so a token is at most the latest clock
 * reading at a start plus the grants ever made plus SYNC_TOKEN_BLOCK + 1
 * per start.  The clock reaches 2^53 microseconds after 2000 in the year
 * 2285; until about 2250 there is room for 10^15 grants and restarts'
 * blocks beyond it (a million grants a second for thirty years).  A server
 * that gets there anyway (a clock set centuries ahead at a start, a
 * reservation file written by hand) logs a WARNING when it starts above the
 * limit or hands out the token 2^53.
 *
 * The same block keeps whether keyed commits have reached the synchronous
 * standbys: a commit that PostgreSQL made visible without their
 * acknowledgement (a canceled wait) is remembered until they have it, and
 * sync_commits_replicated() tells the callers that report grants.
 *
 * Shared state: the counter, the reservation, the confirmed reservation,
 * the largest reservation known from the file or from replay, whether this
 * server hands out tokens as a primary, and the end of a keyed commit not
 * yet acknowledged are atomics in this file's own block (SyncTokens);
 * writing a new reservation (file,
 * WAL record, reserve_lsn) and taking over as a primary are serialized by
 * its one LWLock (tranche "syncwf tokens"), which is taken after partition
 * locks and before PostgreSQL's WAL locks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/fd.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "core/core.h"

#define SYNC_TOKENS_TRANCHE		"syncwf tokens"

#define SYNC_TOKEN_FILE			"syncwf.token"
#define SYNC_TOKEN_TMPFILE		"syncwf.token.tmp"
#define SYNC_TOKEN_BLOCK		((uint64) 1 << 20)

/* The first token a double cannot hold exactly next to its neighbours. */
#define SYNC_TOKEN_EXACT_LIMIT	((uint64) 1 << 53)

/*
 * syncwf's WAL resource manager.  Its ID must be unique among the custom
 * resource managers of a server; docs/reference.md names it.
 */
#define SYNC_RMGR_ID			199
#define SYNC_RMGR_NAME			"syncwf"

/* The one kind of record: tokens below 'upto' may be handed out. */
#define XLOG_SYNC_TOKEN_RESERVE	0x00

typedef struct xl_sync_token_reserve
{
	uint64		upto;
} xl_sync_token_reserve;

typedef struct SyncTokens
{
	LWLock	   *lock;			/* serializes reservations and take-over */
	pg_atomic_uint64 next_token;	/* next fencing token to hand out */
	pg_atomic_uint64 token_reserved;	/* this server, as a primary, wrote
										 * and flushed a reservation of the
										 * tokens below this */
	pg_atomic_uint64 token_confirmed;	/* ... which the synchronous standbys
										 * have acknowledged */
	pg_atomic_uint64 known_reserved;	/* largest reservation read from the
										 * file, replayed or written */
	pg_atomic_uint32 primary;	/* 1 once tokens are handed out as a primary */
	pg_atomic_uint64 unreplicated;	/* end of a keyed commit whose wait for
									 * the synchronous standbys was cut
									 * short; 0: none */
	XLogRecPtr	reserve_lsn;	/* end of the latest reservation record (lock) */
} SyncTokens;

static SyncTokens *Tokens = NULL;

/* Read the reservation file; 0 if there is none or it is unreadable. */
static uint64
sync_read_token_file(void)
{
	FILE	   *file;
	unsigned long long value = 0;

	file = AllocateFile(SYNC_TOKEN_FILE, "r");
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read syncwf token file \"%s\": %m",
							SYNC_TOKEN_FILE)));
		return 0;
	}
	if (fscanf(file, "%llu", &value) != 1)
	{
		ereport(LOG,
				(errmsg("syncwf token file \"%s\" is corrupt; starting tokens from the clock",
						SYNC_TOKEN_FILE)));
		value = 0;
	}
	FreeFile(file);
	return (uint64) value;
}

/* Durably replace the reservation file.  Logs and returns false on failure. */
static bool
sync_write_token_file(uint64 value)
{
	char		buf[32];
	int			len;
	int			fd;

	len = snprintf(buf, sizeof(buf), UINT64_FORMAT "\n", value);
	fd = OpenTransientFile(SYNC_TOKEN_TMPFILE, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not create syncwf token file \"%s\": %m",
						SYNC_TOKEN_TMPFILE)));
		return false;
	}
	errno = 0;
	if (write(fd, buf, len) != len || pg_fsync(fd) != 0)
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not write syncwf token file \"%s\": %m",
						SYNC_TOKEN_TMPFILE)));
		CloseTransientFile(fd);
		return false;
	}
	CloseTransientFile(fd);
	return durable_rename(SYNC_TOKEN_TMPFILE, SYNC_TOKEN_FILE, LOG) == 0;
}

/* Token 'token' is at or past 2^53: say so (a WARNING, never an error). */
static void
sync_warn_token_limit(uint64 token)
{
	ereport(WARNING,
			(errmsg("syncwf fencing tokens have reached 2^53"),
			 errdetail("Token " UINT64_FORMAT " and the tokens after it do not fit in a double: clients that parse the \"token\" of notifications as a JSON number, as JavaScript's JSON.parse does, lose precision.",
					   token),
			 errhint("Read tokens as text (sync_state.token, or a JSON parser that keeps large integers); check the server's clock and the file \"%s\" in the data directory.",
					 SYNC_TOKEN_FILE)));
}

Size
sync_tokens_shmem_size(void)
{
	return MAXALIGN(sizeof(SyncTokens));
}

void
sync_tokens_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_TOKENS_TRANCHE, 1);
}

/*
 * Called once per shared memory initialization (server start and every
 * crash restart), in the postmaster, with AddinShmemInitLock held.
 */
void
sync_tokens_shmem_init(void)
{
	bool		found;

	Tokens = ShmemInitStruct("syncwf tokens", sizeof(SyncTokens), &found);
	if (!found)
	{
		uint64		saved = sync_read_token_file();
		uint64		clock_floor = (uint64) Max(GetCurrentTimestamp(), 0);
		uint64		start = Max(saved, clock_floor) + 1;

		Tokens->lock = &GetNamedLWLockTranche(SYNC_TOKENS_TRANCHE)->lock;
		pg_atomic_init_u64(&Tokens->next_token, start);
		/* nothing reserved yet: the first grant as a primary reserves */
		pg_atomic_init_u64(&Tokens->token_reserved, start);
		pg_atomic_init_u64(&Tokens->token_confirmed, 0);
		pg_atomic_init_u64(&Tokens->known_reserved, saved);
		pg_atomic_init_u32(&Tokens->primary, 0);
		pg_atomic_init_u64(&Tokens->unreplicated, 0);
		Tokens->reserve_lsn = InvalidXLogRecPtr;
		if (start >= SYNC_TOKEN_EXACT_LIMIT)
			sync_warn_token_limit(start);
	}
}

/*
 * The first token of this server as a primary (after a start or a
 * promotion): above every reservation it knows of -- its file, the records
 * it replayed from an earlier primary -- and above the clock now, since a
 * standby's clock read at its start may be far behind the tokens the old
 * primary handed out.  On a standby: tokens for its own session holds,
 * above what it replayed, never reserved (no WAL can be written there).
 */
static bool
sync_tokens_take_over(void)
{
	uint64		floor;

	floor = pg_atomic_read_u64(&Tokens->known_reserved) + 1;
	if (RecoveryInProgress())
	{
		sync_atomic_advance(&Tokens->next_token, floor);
		return false;
	}
	LWLockAcquire(Tokens->lock, LW_EXCLUSIVE);
	if (pg_atomic_read_u32(&Tokens->primary) == 0)
	{
		uint64		clock_floor = (uint64) Max(GetCurrentTimestamp(), 0) + 1;

		floor = Max(pg_atomic_read_u64(&Tokens->known_reserved) + 1, clock_floor);
		sync_atomic_advance(&Tokens->next_token, floor);
		pg_write_barrier();
		pg_atomic_write_u32(&Tokens->primary, 1);
	}
	LWLockRelease(Tokens->lock);
	return true;
}

/*
 * Reserve tokens up to and including at least 'token': the file first (so
 * that a crash restart of this server finds it even if its redo begins
 * after the record), then the WAL record, flushed, for the standbys.
 * Caller may hold partition locks; never raises an error of its own.
 */
static void
sync_reserve_tokens(uint64 token)
{
	LWLockAcquire(Tokens->lock, LW_EXCLUSIVE);
	if (token >= pg_atomic_read_u64(&Tokens->token_reserved))
	{
		xl_sync_token_reserve xlrec;
		XLogRecPtr	lsn;

		xlrec.upto = token + SYNC_TOKEN_BLOCK;
		(void) sync_write_token_file(xlrec.upto);
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		lsn = XLogInsert(SYNC_RMGR_ID, XLOG_SYNC_TOKEN_RESERVE);
		XLogFlush(lsn);
		Tokens->reserve_lsn = lsn;
		sync_atomic_advance(&Tokens->known_reserved, xlrec.upto);
		/* advance even if the file failed: the record is durable */
		pg_atomic_write_u64(&Tokens->token_reserved, xlrec.upto);
	}
	LWLockRelease(Tokens->lock);
}

/* The next fencing token.  Never raises an error. */
uint64
sync_next_token(void)
{
	uint64		token;

	if (unlikely(pg_atomic_read_u32(&Tokens->primary) == 0) &&
		!sync_tokens_take_over())
		return pg_atomic_fetch_add_u64(&Tokens->next_token, 1);

	token = pg_atomic_fetch_add_u64(&Tokens->next_token, 1);
	if (token >= pg_atomic_read_u64(&Tokens->token_reserved))
		sync_reserve_tokens(token);
	if (unlikely(token == SYNC_TOKEN_EXACT_LIMIT))
		sync_warn_token_limit(token);
	return token;
}

/*
 * Would a commit of this session wait for synchronous standbys now?  Its
 * synchronous_commit asks for them, and standbys are named (as the
 * checkpointer has told shared memory; whether any is connected does not
 * matter: a wait then lasts until one is).  This is SyncRepWaitForLSN()'s
 * own test, so a false here means it would not wait either.
 */
static bool
sync_rep_asked(void)
{
	return SyncRepRequested() && sync_standbys_named();
}

/*
 * Have the synchronous standbys acknowledged WAL up to 'lsn', in the mode
 * synchronous_commit asks for (capped at remote flush unless 'commit': only
 * commit records are confirmed as applied)?
 */
static bool
sync_rep_acked(XLogRecPtr lsn, bool commit)
{
	int			mode;
	bool		acked;

	if (synchronous_commit == SYNCHRONOUS_COMMIT_REMOTE_WRITE)
		mode = SYNC_REP_WAIT_WRITE;
	else if (synchronous_commit == SYNCHRONOUS_COMMIT_REMOTE_APPLY && commit)
		mode = SYNC_REP_WAIT_APPLY;
	else
		mode = SYNC_REP_WAIT_FLUSH;
	LWLockAcquire(SyncRepLock, LW_SHARED);
	acked = lsn <= WalSndCtl->lsn[mode];
	LWLockRelease(SyncRepLock);
	return acked;
}

/*
 * May 'token', just granted by this server, be handed to its client?  Yes
 * once the reservation that covers it is acknowledged by the synchronous
 * standbys (waiting for them like a commit does, with the mode
 * synchronous_commit asks for, at most remote flush), or when none is
 * asked for (no synchronous_standby_names, or synchronous_commit below
 * remote_write in this session: the token is then as durable as this
 * session's commits).  No: the wait was canceled or the backend is being
 * terminated, and the caller must not hand the token out.  Call with no
 * LWLock held.
 */
bool
sync_tokens_confirm(uint64 token)
{
	XLogRecPtr	lsn;
	uint64		upto;
	bool		acked;

	if (likely(token < pg_atomic_read_u64(&Tokens->token_confirmed)))
		return true;
	/* no synchronous standby to wait for; or a standby's own tokens */
	if (!sync_rep_asked() || RecoveryInProgress())
		return true;
	LWLockAcquire(Tokens->lock, LW_SHARED);
	lsn = Tokens->reserve_lsn;
	upto = pg_atomic_read_u64(&Tokens->token_reserved);
	LWLockRelease(Tokens->lock);
	if (XLogRecPtrIsInvalid(lsn) || token >= upto)
		return true;			/* granted before this server took over */

	SyncRepWaitForLSN(lsn, false);
	if (!sync_rep_asked())
		return true;			/* no longer asked for meanwhile */
	acked = sync_rep_acked(lsn, false);
	if (acked)
		sync_atomic_advance(&Tokens->token_confirmed, upto);
	return acked;
}

/*
 * After the commit of a transaction that changed keyed holds (its grants,
 * releases, hand-offs; launch-plan slots are keyed holds): if the commit's
 * wait for the synchronous standbys was cut short (canceled, or the
 * backend is being terminated), PostgreSQL has made it visible here
 * anyway.  Remember it, so that no grant is reported until the standbys
 * have it (sync_commits_replicated()).
 */
void
sync_tokens_note_commit(void)
{
	XLogRecPtr	lsn = XactLastCommitEnd;

	if (XLogRecPtrIsInvalid(lsn) || !sync_rep_asked() || sync_rep_acked(lsn, true))
		return;
	sync_atomic_advance(&Tokens->unreplicated, lsn);
}

/*
 * Has every keyed commit made visible without the synchronous standbys'
 * acknowledgement reached them by now?  With 'wait', wait for them as a
 * commit does; false if that wait is canceled or the standbys are still
 * behind.  Callers report a grant only when this is true.  Call with no
 * LWLock held.
 */
bool
sync_commits_replicated(bool wait)
{
	uint64		lsn = pg_atomic_read_u64(&Tokens->unreplicated);

	if (likely(lsn == 0) || RecoveryInProgress())
		return true;
	if (wait)
		SyncRepWaitForLSN((XLogRecPtr) lsn, true);
	if (sync_rep_asked() && !sync_rep_acked((XLogRecPtr) lsn, true))
		return false;
	/* reached (or no longer asked for): forget it, unless it moved on */
	(void) pg_atomic_compare_exchange_u64(&Tokens->unreplicated, &lsn, 0);
	return true;
}

/* Redo of a reservation: the standby knows of it, in memory and its file. */
static void
sync_rmgr_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_sync_token_reserve *xlrec;

	if (info != XLOG_SYNC_TOKEN_RESERVE)
		elog(PANIC, "syncwf redo: unknown op code %u", info);
	xlrec = (xl_sync_token_reserve *) XLogRecGetData(record);
	if (xlrec->upto > pg_atomic_read_u64(&Tokens->known_reserved))
	{
		LWLockAcquire(Tokens->lock, LW_EXCLUSIVE);
		if (xlrec->upto > pg_atomic_read_u64(&Tokens->known_reserved))
		{
			(void) sync_write_token_file(xlrec->upto);
			pg_atomic_write_u64(&Tokens->known_reserved, xlrec->upto);
		}
		LWLockRelease(Tokens->lock);
	}
}

static void
sync_rmgr_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_SYNC_TOKEN_RESERVE)
	{
		xl_sync_token_reserve *xlrec = (xl_sync_token_reserve *) XLogRecGetData(record);

		appendStringInfo(buf, "fencing tokens below " UINT64_FORMAT, xlrec->upto);
	}
}

static const char *
sync_rmgr_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_SYNC_TOKEN_RESERVE)
		return "TOKEN_RESERVE";
	return NULL;
}

static RmgrData sync_rmgr = {
	.rm_name = SYNC_RMGR_NAME,
	.rm_redo = sync_rmgr_redo,
	.rm_desc = sync_rmgr_desc,
	.rm_identify = sync_rmgr_identify,
};

/*
 * Register syncwf's resource manager; from _PG_init, while
 * shared_preload_libraries are loaded (before any redo).
 */
void
sync_tokens_register_rmgr(void)
{
	RegisterCustomRmgr(SYNC_RMGR_ID, &sync_rmgr);
}

/*
 * Make sure the next token is at least 'next' (after loading tokens from
 * sync_state: a promoted standby's clock and file may be behind them).
 */
void
sync_tokens_advance(uint64 next)
{
	sync_atomic_advance(&Tokens->next_token, next);
}

/* Raise an atomic counter to at least 'next'; never lowers it. */
void
sync_atomic_advance(pg_atomic_uint64 *counter, uint64 next)
{
	uint64		cur = pg_atomic_read_u64(counter);

	while (cur < next)
	{
		if (pg_atomic_compare_exchange_u64(counter, &cur, next))
			break;
	}
}

/* Lower an atomic counter to at most 'value'; true if this call lowered it. */
bool
sync_atomic_lower(pg_atomic_uint64 *counter, uint64 value)
{
	uint64		cur = pg_atomic_read_u64(counter);

	while (value < cur)
	{
		if (pg_atomic_compare_exchange_u64(counter, &cur, value))
			return true;
	}
	return false;
}
