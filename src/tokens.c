/*-------------------------------------------------------------------------
 *
 * tokens.c
 *		Fencing tokens: every grant gets a bigint strictly greater than every
 *		token handed out before it, by this server, ever -- also across
 *		restarts and crashes.
 *
 * One counter serves every lock, so a token is also greater than every
 * earlier token of the same lock.  Two things keep it from going backwards
 * after a restart:
 *
 *	- a reservation file, $PGDATA/syncwf.token, holds a value that no token
 *	  handed out so far reaches.  A backend that is about to hand out a token
 *	  at or past the reserved value first durably writes a new reservation
 *	  SYNC_TOKEN_BLOCK further on (one fsync per block of grants);
 *	- the counter starts at least at the current time in microseconds since
 *	  2000-01-01, so a lost or stale file (a restored base backup, a promoted
 *	  standby) still yields larger tokens as long as the clock has not gone
 *	  backwards by more than the grants in between.
 *
 * A failure to write the file is logged, not raised: a grant may happen in
 * a commit callback where an error is not allowed, and the clock floor
 * still protects the order.
 *
 * Tokens also fit in 53 bits, so that the JSON numbers of notifications
 * are exact where JSON numbers are doubles (JavaScript).  The counter only
 * moves by one per grant, and at each start to the larger of the clock and
 * the reservation (at most SYNC_TOKEN_BLOCK past the last token handed
 * out) plus one; so a token is at most the latest clock reading at a start
 * plus the grants ever made plus SYNC_TOKEN_BLOCK + 1 per start.  The clock
 * reaches 2^53 microseconds after 2000 in the year 2285; until about 2250
 * there is room for 10^15 grants and restarts' blocks beyond it (a million
 * grants a second for thirty years).  A server that gets there anyway (a
 * clock set centuries ahead at a start, a reservation file written by
 * hand) logs a WARNING when it starts above the limit or hands out the
 * token 2^53.
 *
 * Shared state: the counter and the reservation are atomics in this file's
 * own block (SyncTokens); writing a new reservation is serialized by its
 * one LWLock (tranche "syncwf tokens").
 *
 * Layer 0: calls no other file of syncwf.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "tokens.h"

#define SYNC_TOKENS_TRANCHE		"syncwf tokens"

#define SYNC_TOKEN_FILE			"syncwf.token"
#define SYNC_TOKEN_TMPFILE		"syncwf.token.tmp"
#define SYNC_TOKEN_BLOCK		((uint64) 1 << 20)

/* The first token a double cannot hold exactly next to its neighbours. */
#define SYNC_TOKEN_EXACT_LIMIT	((uint64) 1 << 53)

typedef struct SyncTokens
{
	LWLock	   *lock;			/* serializes reservation writes */
	pg_atomic_uint64 next_token;	/* next fencing token to hand out */
	pg_atomic_uint64 token_reserved;	/* tokens below this are durable */
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
		/* nothing reserved yet: the first grant writes the file */
		pg_atomic_init_u64(&Tokens->token_reserved, start);
		if (start >= SYNC_TOKEN_EXACT_LIMIT)
			sync_warn_token_limit(start);
	}
}

/* Durably reserve tokens up to and including at least 'token'. */
static void
sync_reserve_tokens(uint64 token)
{
	LWLockAcquire(Tokens->lock, LW_EXCLUSIVE);
	if (token >= pg_atomic_read_u64(&Tokens->token_reserved))
	{
		uint64		upto = token + SYNC_TOKEN_BLOCK;

		(void) sync_write_token_file(upto);
		/* advance even on failure: retrying every grant would not help */
		pg_atomic_write_u64(&Tokens->token_reserved, upto);
	}
	LWLockRelease(Tokens->lock);
}

/* The next fencing token.  Never raises an error. */
uint64
sync_next_token(void)
{
	uint64		token = pg_atomic_fetch_add_u64(&Tokens->next_token, 1);

	if (token >= pg_atomic_read_u64(&Tokens->token_reserved))
		sync_reserve_tokens(token);
	if (unlikely(token == SYNC_TOKEN_EXACT_LIMIT))
		sync_warn_token_limit(token);
	return token;
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
