/*-------------------------------------------------------------------------
 *
 * reconcile.h
 *		One round of maintenance (reconcile.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_RECONCILE_H
#define SYNC_RECONCILE_H

#include "datatype/timestamp.h"

extern int	sync_reconcile_round(TimestampTz *next_wake);

#endif							/* SYNC_RECONCILE_H */
