// explain.js - for each alert kind, what the signature means and what usually
// fixes it, in the words an operator on call needs. Shown beside every alert.
// Facts follow /work/shared/RECLAIM-NOTES (refault semantics, the two reclaim
// counter families, MADV_FREE, PSI).

const KINDS = {
  thrash: {
    title: "Thrashing: the working set does not fit",
    meaning:
      "Pages are read back almost as soon as reclaim evicts them (workingset refaults, " +
      "many of them activations/restores), and the time lost shows as memory pressure (PSI). " +
      "The memory in use is smaller than what the workload touches over and over.",
    fixes: [
      "Give the host or cgroup more memory (or move work elsewhere).",
      "Protect the important cgroup with memory.low / memory.min, and cap noisy neighbours with memory.high.",
      "Fix the access pattern: smaller caches or batch sizes, avoid scanning data that does not fit.",
    ],
  },
  swap_imbalance: {
    title: "Swap imbalance: reclaim takes the wrong kind of memory",
    meaning:
      "Reclaim pressure is split wrongly between anonymous and file memory: file cache " +
      "refaults while cold anon is never scanned, or anon is swapped out and straight back " +
      "in while plenty of cold file cache is there. A swapless machine can also keep " +
      "lazily freed (MADV_FREE) anon that reclaim should have dropped.",
    fixes: [
      "Tune vm.swappiness (per cgroup on v1: memory.swappiness): higher when cold anon sits unscanned, lower when anon swaps back in.",
      "Steer reclaim per cgroup with memory.low (protect) and memory.high (throttle early).",
      "Add swap (or zram) when there is no free swap, so cold anon can be reclaimed at all.",
      "MADV_FREE case: on kernels before 4.12 lazily freed pages stay on the anon list without swap; upgrade, or have the allocator use MADV_DONTNEED.",
    ],
  },
  writeback_storm: {
    title: "Writeback storm: reclaim runs into dirty pages",
    meaning:
      "Reclaim finds dirty or writeback pages at the LRU tail faster than the flushers " +
      "clean them: pages written from reclaim, immediate-reclaim rotations, direct reclaim " +
      "stalls and falling reclaim efficiency, with io and memory pressure rising together.",
    fixes: [
      "Lower vm.dirty_background_bytes / vm.dirty_bytes (or the _ratio twins) so the flushers start earlier and writers are throttled sooner.",
      "Limit a heavy writer's cgroup with memory.high: its dirty pages are then bounded by its own limit.",
      "Faster or less busy storage for the written files; spread bursts of writes.",
    ],
  },
  direct_reclaim_stall: {
    title: "Direct reclaim stalls",
    meaning:
      "Allocating tasks reclaim memory themselves (allocstall_*, pgscan_direct) because " +
      "kswapd does not keep free memory above the watermarks: the application waits in " +
      "the allocator.",
    fixes: [
      "Raise vm.watermark_scale_factor (or vm.min_free_kbytes) so kswapd starts earlier.",
      "Find what allocates in bursts; reduce its working set or move it to its own cgroup with memory.high.",
      "If dirty pages slow reclaim, see writeback_storm.",
    ],
  },
  oom_kill: {
    title: "OOM kill",
    meaning:
      "The kernel (or a cgroup limit) ran out of reclaimable memory and killed a task " +
      "(oom_kill in vmstat, or memory.events oom_kill of a cgroup).",
    fixes: [
      "Raise the limit (memory.max) or the host's memory, or reduce the workload's footprint.",
      "Use memory.high below memory.max so the group is throttled and reclaimed before it is killed.",
      "Check for a leak: memory_current rising steadily before the kill.",
    ],
  },
  host_silent: {
    title: "Host silent",
    meaning:
      "No sample arrived for several sampling intervals. The agent stopped, the network " +
      "or the server refused it, or the machine is hung or down (a thrashing machine can " +
      "be too slow to run its agent).",
    fixes: [
      "Check the agent: systemctl status vmscope-agent; its log names refusals (401, 400) and retries.",
      "Check the machine itself (console, IPMI); look at the last charts before the gap for pressure.",
    ],
  },
  clock_skew: {
    title: "Clock skew",
    meaning:
      "The host's clock differs from the server's. Ahead by more than 10 minutes (or " +
      "behind by more than the retention), every sample is refused and lost; otherwise " +
      "its samples and alerts are dated by its own wrong clock.",
    fixes: [
      "Synchronise the host's clock: timedatectl status; enable NTP (systemd-timesyncd or chrony).",
      "Check for a virtual machine paused or restored from a snapshot, or a dead RTC battery.",
    ],
  },
  compaction_stall: {
    title: "Compaction stalls",
    meaning:
      "Allocations of contiguous memory (huge pages, large kernel buffers) wait while the " +
      "kernel compacts memory (compact_stall, compact_fail): memory is free but fragmented.",
    fixes: [
      "Set transparent hugepage defrag to defer or madvise instead of always.",
      "Raise vm.min_free_kbytes / vm.watermark_scale_factor so kswapd and kcompactd work ahead.",
      "Avoid high-order allocations in the hot path (drivers, jumbo frames).",
    ],
  },
  kernel_regression: {
    title: "Kernel regression: a release reclaims worse than the baseline",
    meaning:
      "The fleet's watch compared the hosts running this kernel release with those running the " +
      "baseline release over its window, one value per host: the figures listed are worse with " +
      "significance after correcting for every test of the run, and by more than a minimum effect. " +
      "It is about the fleet, not one host.",
    fixes: [
      "Open the compare page of the pair (the link) and the worse figures' hosts; check what else differs between the groups (roles, workloads: the evidence lists label differences).",
      "Hold the rollout of the release; look for the kernel change in the releases' changelogs (reclaim, writeback, memcg).",
      "If the groups run different workloads, pin a fitting baseline or run the watch with --regression-stratify LABEL.",
    ],
  },
  memory_high_throttle: {
    title: "Throttled at memory.high",
    meaning:
      "The cgroup keeps hitting memory.high (memory.events high): its tasks are throttled and forced to reclaim.",
    fixes: [
      "Raise memory.high if the group really needs the memory, or reduce its working set.",
    ],
  },
};

const FALLBACK = {
  title: "",
  meaning: "A reclaim signature reported by the detectors; the evidence lists the figures it was based on.",
  fixes: ["Open the host view at that moment and compare refaults, scan/steal and pressure."],
};

// The explanation for kind: {title, meaning, fixes[]}. Never null.
export function explain(kind) {
  const e = KINDS[kind];
  if (e) return e;
  return { ...FALLBACK, title: kind };
}

// The kinds the alerts filter offers (detectors may add others; a free value works too).
export const KNOWN_KINDS = Object.keys(KINDS);
