/* migrate.h - applies the versioned SQL migrations of schema/ at start.
 *
 * Files named NNN_name.sql (three digits, then an underscore) are applied
 * in name order, each in its own transaction together with its row in
 * schema_migrations(name, applied_at), so a failed migration leaves nothing
 * behind and the next start retries it. A session advisory lock serialises
 * servers starting at once; a migration already recorded is skipped, so
 * applying twice is harmless.
 *
 * On a distributed PostgreSQL (the citus extension created in the
 * database) the migrations run on the coordinator only: pointed at a
 * worker node they refuse, saying so. After the files, still under the
 * lock, vmscope_distribute() (096_citus.sql) places the tables not yet
 * placed (a no-op without Citus).
 */
#ifndef VMSCOPE_MIGRATE_H
#define VMSCOPE_MIGRATE_H

#include <libpq-fe.h>
#include <stddef.h>

/* Applies pending migrations from dir through c (idle, not in a
 * transaction). *napplied (may be NULL) receives how many were applied now.
 * Returns 0, -1 with err written ("could not apply 003_x.sql: ..."), or
 * MIGRATE_WRONG_NODE (c is a Citus worker). */
#define MIGRATE_WRONG_NODE (-2)
int migrate_apply(PGconn *c, const char *dir, int *napplied, char *err, size_t errlen);

#endif
