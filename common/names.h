/* names.h - validation rules for identifiers shared by agent and server.
 *
 * The contract (CONTRACT.md §1) fixes what a host name and a cgroup path may
 * be; both sides apply the same rules so that an agent never posts what the
 * server would refuse. All functions are pure and cannot fail.
 */
#ifndef VMSCOPE_NAMES_H
#define VMSCOPE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define HOST_NAME_MAXLEN 253
#define CGROUP_PATH_MAXLEN 4096
#define METRIC_NAME_MAXLEN 128

/* 1..253 characters of A-Za-z0-9._- */
bool name_host_valid(const char *s, size_t len);

/* Printable UTF-8 starting with '/', no "." or ".." component, no empty
 * component except the trailing-free root, at most 4096 bytes. "/" alone is
 * refused: the root cgroup is never reported. */
bool name_cgroup_path_valid(const char *s, size_t len);

/* A kernel counter or file key as printed by the kernel or the agent:
 * 1..128 bytes of A-Za-z0-9 and _ ( ) . : - (meminfo has "Active(anon)",
 * settings have "vm.swappiness"). */
bool name_metric_valid(const char *s, size_t len);

/* A name an operator gives to a thing of the server (an ingest token, a
 * notification receiver): 1 to 64 of A-Za-z0-9._-, printed in lists and
 * logs as it is. */
#define NAME_ID_MAXLEN 64
bool name_id_valid(const char *s, size_t len);

/* True when s[0..len) is well-formed UTF-8 with no control characters
 * (C0, DEL, C1). */
bool name_printable_utf8(const char *s, size_t len);

/* A free-text value a person reads (label values, kernel, boot_id,
 * agent_version): printable UTF-8 as above and no Unicode bidirectional
 * control (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), which
 * would make a value display as another ("Trojan Source"). Cgroup paths
 * keep what the kernel gave and are shown escaped instead. */
bool name_text_valid(const char *s, size_t len);

/* s with what would make it display as something else written out, for
 * text people read outside the dashboard (notifications, logs): C0/C1
 * controls, DEL and bidirectional controls as \uXXXX, bytes that are not
 * UTF-8 as \xXX; the rest as it is. A new string the caller frees; NULL
 * when out of memory. */
char *name_visible(const char *s);

#endif
