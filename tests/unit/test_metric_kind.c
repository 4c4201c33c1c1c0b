/* Unit tests for the counter/gauge table (server/store/metric_kind.c), checked
 * against the kernel semantics in RECLAIM-NOTES.md. */
#include "harness.h"
#include "metric_kind.h"

struct row {
	const char *name;
	bool cgroup;
	enum metric_kind kind;
	const char *unit;
};

static const struct row rows[] = {
	{ "vmstat.nr_free_pages", false, METRIC_GAUGE, "pages" },
	{ "vmstat.nr_dirty", false, METRIC_GAUGE, "pages" },
	{ "vmstat.nr_dirty_threshold", false, METRIC_GAUGE, "pages" },
	{ "vmstat.workingset_nodes", false, METRIC_GAUGE, "pages" },
	{ "vmstat.nr_vmscan_write", false, METRIC_COUNTER, "pages/s" },
	{ "vmstat.nr_vmscan_immediate_reclaim", false, METRIC_COUNTER, "pages/s" },
	{ "vmstat.nr_dirtied", false, METRIC_COUNTER, "pages/s" },
	{ "vmstat.nr_written", false, METRIC_COUNTER, "pages/s" },
	{ "vmstat.nr_foll_pin_acquired", false, METRIC_COUNTER, "pages/s" },
	{ "vmstat.pgscan_kswapd", false, METRIC_COUNTER, "pages/s" },
	{ "vmstat.workingset_refault_file", false, METRIC_COUNTER, "pages/s" },
	{ "vmstat.pswpin", false, METRIC_COUNTER, "pages/s" },
	{ "vmstat.pgmajfault", false, METRIC_COUNTER, "events/s" },
	{ "vmstat.allocstall_normal", false, METRIC_COUNTER, "events/s" },
	{ "vmstat.oom_kill", false, METRIC_COUNTER, "events/s" },
	{ "meminfo.MemFree", false, METRIC_GAUGE, "kB" },
	{ "meminfo.Active(anon)", false, METRIC_GAUGE, "kB" },
	{ "meminfo.HugePages_Total", false, METRIC_GAUGE, "pages" },
	{ "psi.memory.some.avg10", false, METRIC_GAUGE, "%" },
	{ "psi.io.full.total", false, METRIC_COUNTER, "us/s" },
	{ "settings.vm.swappiness", false, METRIC_GAUGE, "" },
	{ "settings.vm.min_free_kbytes", false, METRIC_GAUGE, "kB" },
	{ "settings.vm.dirty_bytes", false, METRIC_GAUGE, "bytes" },
	{ "settings.swap.zram.used_kb", false, METRIC_GAUGE, "kB" },
	{ "settings.swap.file.size_kb", false, METRIC_GAUGE, "kB" },
	{ "settings.swap.devices", false, METRIC_GAUGE, "" },
	{ "settings.swap.zram.priority", false, METRIC_GAUGE, "" },
	{ "settings.zswap.enabled", false, METRIC_GAUGE, "" },
	{ "settings.zswap.max_pool_percent", false, METRIC_GAUGE, "%" },
	{ "meta.page_size", false, METRIC_GAUGE, "bytes" },
	{ "stat.anon", true, METRIC_GAUGE, "bytes" },
	{ "stat.file_dirty", true, METRIC_GAUGE, "bytes" },
	{ "stat.inactive_file", true, METRIC_GAUGE, "bytes" },
	{ "stat.slab_reclaimable", true, METRIC_GAUGE, "bytes" },
	{ "stat.cache", true, METRIC_GAUGE, "bytes" },		/* v1 */
	{ "stat.total_rss", true, METRIC_GAUGE, "bytes" },	/* v1 hierarchical size */
	{ "stat.pgfault", true, METRIC_COUNTER, "events/s" },
	{ "stat.pgmajfault", true, METRIC_COUNTER, "events/s" },
	{ "stat.workingset_refault_file", true, METRIC_COUNTER, "pages/s" },
	{ "stat.pgscan_direct", true, METRIC_COUNTER, "pages/s" },
	{ "stat.pgsteal", true, METRIC_COUNTER, "pages/s" },
	{ "stat.pglazyfreed", true, METRIC_COUNTER, "pages/s" },
	{ "stat.thp_fault_alloc", true, METRIC_COUNTER, "pages/s" },
	{ "stat.pgpgin", true, METRIC_COUNTER, "pages/s" },	/* v1 */
	{ "stat.total_pgpgout", true, METRIC_COUNTER, "pages/s" },
	{ "events.oom_kill", true, METRIC_COUNTER, "events/s" },
	{ "psi.some.avg60", true, METRIC_GAUGE, "%" },
	{ "psi.full.total", true, METRIC_COUNTER, "us/s" },
	{ "memory_current", true, METRIC_GAUGE, "bytes" },
	{ "memory_max", true, METRIC_GAUGE, "bytes" },
	{ "swap_current", true, METRIC_GAUGE, "bytes" },
	{ "settings.memory.high", true, METRIC_GAUGE, "bytes" },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		if (metric_kind(r->name, r->cgroup) != r->kind)
			fprintf(stderr, "kind of %s\n", r->name);
		CHECK_INT(metric_kind(r->name, r->cgroup), r->kind);
		CHECK_STR(metric_unit(r->name, r->cgroup), r->unit);
	}
	CHECK_STR(metric_kind_word(METRIC_COUNTER), "rate");
	CHECK_STR(metric_kind_word(METRIC_GAUGE), "gauge");
	CHECK(metric_scale("psi.memory.some.avg10", false) == 0.01);
	CHECK(metric_scale("psi.some.avg300", true) == 0.01);
	CHECK(metric_scale("psi.memory.some.total", false) == 1.0);
	CHECK(metric_scale("vmstat.pgfault", false) == 1.0);
	return harness_report("test_metric_kind");
}
