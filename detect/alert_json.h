/* alert_json.h - the alert as the contract shows it (CONTRACT.md §3), shared
 * by the database reader (alert_store.c) and bin/vmscope-replay so both print
 * the same shape and the same time format. */
#ifndef VMSCOPE_ALERT_JSON_H
#define VMSCOPE_ALERT_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A fleet-scope alert (the kernel-regression watch) has host "" (no host's
 * name is empty) and says what it is about in subject. */
#define ALERT_FLEET_HOST ""

struct alert_rec {
	int64_t id;
	char *host;		/* owned; ALERT_FLEET_HOST for a fleet alert */
	char *cgroup;		/* owned, NULL: host-wide */
	char *kind;		/* owned */
	char *severity;		/* owned: "warning" / "critical" */
	int open;		/* 1 open, 0 resolved */
	int64_t started_ms, opened_ms, ended_ms, updated_ms;	/* ended_ms 0 while open */
	char *summary;		/* owned */
	json_t *evidence;	/* owned reference */
	bool silenced;		/* a silence active now matches it (silence.h) */
	char *subject;		/* owned; a fleet alert's subject, else NULL */
};

/* True for a fleet-scope alert (host ALERT_FLEET_HOST). */
bool alert_is_fleet(const struct alert_rec *a);

/* RFC 3339 UTC with a Z: "2026-11-30T10:00:00Z", or with ".125" when the
 * time has milliseconds. buf needs 32 bytes. Returns buf. */
char *alert_time_format(int64_t ms, char *buf, size_t len);

/* The contract object of one alert: a new reference, NULL when out of
 * memory. A fleet alert keeps "host" a string (""), so clients that read
 * it as one still parse it, and adds "scope": "fleet" and "subject". */
json_t *alert_rec_to_json(const struct alert_rec *a);

/* Frees what a owns and zeroes it. */
void alert_rec_release(struct alert_rec *a);

#endif
