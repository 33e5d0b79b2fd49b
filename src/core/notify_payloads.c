/*-------------------------------------------------------------------------
 *
 * notify_payloads.c
 *		The NOTIFY events of keyed holds: their JSON payload, and the
 *		channels they go out on -- "syncwf", which carries every event, and
 *		the channel of the entry's controller, which carries that
 *		controller's events only, so that a controller can listen to its own
 *		traffic.  docs/reference.md ("Notifications of keyed holds")
 *		documents both, field by field.
 *
 * The channel of a controller is a deterministic function of its name
 * (sync_controller_channel(), SQL sync_channel()): "syncwf/" followed by
 * the name, when that fits in a channel name (NAMEDATALEN - 1 = 63 bytes,
 * so names of at most 56 bytes) and contains no "#"; otherwise "syncwf/",
 * the longest beginning of the name of at most 39 bytes that ends on a
 * character boundary, "#", and the first 16 hex digits of the SHA-256 of
 * the whole name.  A plain channel never contains "#", so it cannot be the
 * channel of a hashed name; two hashed names share a channel only if they
 * begin alike and their hashes agree in 64 bits.
 *
 * Events go out with Async_Notify(), so only when the transaction that
 * caused them commits.  Backend-local; no state.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/async.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/json.h"
#include "utils/timestamp.h"

#include "core/core.h"

#define SYNC_CHANNEL_PREFIX		"syncwf/"
#define SYNC_CHANNEL_HASH_HEX	16

/*
 * The channel of 'controller' (a valid controller name) into 'channel', a
 * buffer of NAMEDATALEN bytes.
 */
void
sync_controller_channel(const char *controller, char *channel)
{
	const int	prefix_len = strlen(SYNC_CHANNEL_PREFIX);
	int			len = strlen(controller);
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	pg_cryptohash_ctx *ctx;
	int			keep;
	char	   *p;

	if (prefix_len + len <= NAMEDATALEN - 1 && strchr(controller, '#') == NULL)
	{
		snprintf(channel, NAMEDATALEN, SYNC_CHANNEL_PREFIX "%s", controller);
		return;
	}

	ctx = pg_cryptohash_create(PG_SHA256);
	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) controller, len) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute the SHA-256 of a controller name: %s",
			 pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);

	keep = pg_mbcliplen(controller, len,
						NAMEDATALEN - 1 - prefix_len - 1 - SYNC_CHANNEL_HASH_HEX);
	p = channel + snprintf(channel, NAMEDATALEN, SYNC_CHANNEL_PREFIX "%.*s#",
						   keep, controller);
	for (int i = 0; i < SYNC_CHANNEL_HASH_HEX / 2; i++)
		p += sprintf(p, "%02x", digest[i]);
	Assert(strlen(channel) <= NAMEDATALEN - 1);
}

/*
 * Send one event of keyed holds, when this transaction commits: on channel
 * "syncwf", and on the channel of 'controller' if the entry has one.
 * token <= 0: none (JSON null).  reason NULL: no "reason" key; deadline 0:
 * no "deadline" key.
 */
static void
sync_keyed_notify_payload(const char *event, const char *name, const char *holder,
						  int64 token, const char *controller, const char *reason,
						  TimestampTz deadline)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"event\": ");
	escape_json(&buf, event);
	appendStringInfoString(&buf, ", \"lock\": ");
	escape_json(&buf, name);
	appendStringInfoString(&buf, ", \"holder\": ");
	escape_json(&buf, holder);
	appendStringInfoString(&buf, ", \"token\": ");
	if (token > 0)
		appendStringInfo(&buf, INT64_FORMAT, token);
	else
		appendStringInfoString(&buf, "null");
	appendStringInfoString(&buf, ", \"controller\": ");
	if (controller)
		escape_json(&buf, controller);
	else
		appendStringInfoString(&buf, "null");
	if (reason)
	{
		appendStringInfoString(&buf, ", \"reason\": ");
		escape_json(&buf, reason);
	}
	if (deadline != 0)
	{
		appendStringInfoString(&buf, ", \"deadline\": ");
		escape_json(&buf, timestamptz_to_str(deadline));
	}
	appendStringInfoChar(&buf, '}');
	Async_Notify(SYNC_NOTIFY_CHANNEL, buf.data);
	if (controller)
	{
		char		channel[NAMEDATALEN];

		sync_controller_channel(controller, channel);
		Async_Notify(channel, buf.data);
	}
	pfree(buf.data);
}

/* An event without a deadline (sync_keyed_notify_payload()). */
void
sync_keyed_notify(const char *event, const char *name, const char *holder,
				  int64 token, const char *controller, const char *reason)
{
	sync_keyed_notify_payload(event, name, holder, token, controller, reason, 0);
}

/* A hold is preempted: event "preempt", its grace ending at 'deadline'. */
void
sync_keyed_notify_preempt(const char *name, const char *holder, int64 token,
						  const char *controller, TimestampTz deadline)
{
	sync_keyed_notify_payload("preempt", name, holder, token, controller,
							  "preempted", deadline);
}
