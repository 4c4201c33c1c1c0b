/* alert_kinds.h - the alert kinds the server raises: the detectors'
 * (detect_kinds.h) and host_silent, raised by the server's tick
 * (alert_store.c). GET /api/v1/alerts refuses a kind that is neither one
 * of these nor stored in the alerts table (written by an older version, or
 * by hand) with 400 and this list (docs/api.md). */
#ifndef VMSCOPE_ALERT_KINDS_H
#define VMSCOPE_ALERT_KINDS_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the server raises alerts of kind. */
bool alert_kind_known(const char *kind);

/* The kinds as "thrash, swap_imbalance, ..., host_silent" into buf
 * (truncated to len - 1 bytes, always terminated). */
void alert_kinds_text(char *buf, size_t len);

#endif
