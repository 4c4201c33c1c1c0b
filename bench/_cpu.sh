# _cpu.sh - sourced by the benchmark scripts (run.sh, ingest_cpu.sh,
# compare_bench.sh): CPU time of the processes they measure, from /proc.
# pg_pids needs PGDATA_DIR (the cluster's data directory) set by the caller.

# cpu_of PID... -> CPU ticks (user+sys, with reaped children) of those processes
cpu_of() {
	local total=0 p
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] || continue
		total=$((total + $(awk '{print $14+$15+$16+$17}' "/proc/$p/stat")))
	done
	echo "$total"
}
# the postmaster and its children
pg_pids() { local pm; pm=$(head -1 "$PGDATA_DIR/postmaster.pid"); echo "$pm $(ps -o pid= --ppid "$pm" | tr '\n' ' ')"; }
TCK=$(getconf CLK_TCK)
