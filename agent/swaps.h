/* swaps.h - what the swap is: /proc/swaps summed per kind of device.
 *
 * A detector must tell swap that costs a disk read (a partition, a file)
 * from swap that costs a decompression (zram, zswap in front of either).
 * /proc/swaps lists every active swap area with the kernel's type
 * ("partition" for a block device, "file" otherwise; mm/swapfile.c
 * swap_show), its size and use in KiB and its priority. A zram device is a
 * block device, so the kernel says "partition": it is recognised by its
 * name, /dev/zramN (the basename zramN, so /dev/block/zram0 too).
 *
 * The sample's settings are name -> integer in a dictionary shared by a
 * whole fleet, so devices are summed per kind ("swap.zram.used_kb") rather
 * than listed by path: a path is no integer, and a key per path would grow
 * the dictionary with every host's file names. Pure functions, no I/O.
 */
#ifndef VMSCOPE_AGENT_SWAPS_H
#define VMSCOPE_AGENT_SWAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "procfs.h"

#define SWAP_KINDS_MAX 6	/* partition, file, zram and up to three
				 * types a later kernel may print */
#define SWAP_KIND_LEN 16	/* a type word: 1..16 of a-z */

struct swap_kind {
	char name[SWAP_KIND_LEN + 1];	/* "partition", "file", "zram", ... */
	int64_t devices;
	int64_t size_kb, used_kb;	/* sums over the kind's devices */
	int64_t priority;		/* the highest priority set on one of its
					 * devices, valid when has_priority */
	bool has_priority;		/* a device has a priority >= 0; the kernel
					 * gives devices swapped on without one a
					 * negative priority, below any set one */
};

struct swap_summary {
	int64_t devices;		/* every swap area counted below */
	int nkinds;
	struct swap_kind kind[SWAP_KINDS_MAX];	/* partition, file, zram first,
						 * then others as met; a kind
						 * with 0 devices is not reported */
	int bad;			/* lines not understood (skipped) */
	const char *first_bad;		/* the first of them, borrowed from the
					 * parsed buffer (NULL: none) */
	size_t first_bad_len;
};

/* Parses the text of /proc/swaps in rb (its header line "Filename ..."
 * skipped) into *out. Each device line is "NAME TYPE SIZE USED PRIORITY",
 * blank separated (the kernel escapes blanks in NAME). A line that does
 * not parse (too few fields, a type that is not 1..16 of a-z, a size or
 * use that is not a decimal integer up to 2^63-1, a priority that is not
 * an int, sums beyond 2^63-1) is skipped and counted in out->bad, as is a
 * device of a seventh kind. Cannot fail: a file with only its header gives
 * devices 0. out borrows from rb (first_bad) while rb is unchanged. */
void swaps_parse(const struct rbuf *rb, struct swap_summary *out);

/* Whether NAME (a /proc/swaps file name, escaped as printed) is a zram
 * device: its basename is "zram" followed by one or more digits. */
bool swaps_is_zram(const char *name, size_t len);

#endif
