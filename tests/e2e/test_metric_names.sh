#!/usr/bin/env bash
# test_metric_names.sh - one client inventing metric names cannot stop new
# names for everyone (server/ingest/admit.c, common/dict.c staging):
#   - one POST of 17 samples x 4,000 invented vmstat names is refused (400
#     naming the per-token budget) and leaves nothing behind: no name in the
#     metric_names table, no budget spent; right after it the same token's
#     real sample and a real new kernel counter are stored;
#   - a host bringing more than --max-new-names-per-host new names within
#     the hour gets 400 naming that budget, a token bringing more than
#     --max-new-names-per-token over several hosts gets 400 naming that one;
#     another token's new counter still goes in;
#   - every refusal is counted in /metrics (vmscope_ingest_refusals_total).
. "$(dirname "$0")/_lib.sh"
e2e_init names
TOKEN2=e2e-token-two-$RANDOM$RANDOM
e2e_server_start --token "$TOKEN2" --max-new-names-per-host 300 --max-new-names-per-token 1000
NOW=$(e2e_now)

post_as() { # TOKEN BODY-FILE
	req POST /api/v1/samples -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
		--data-binary @"$2"
}
dict_size() { # the server's dictionary size in /metrics
	req GET /metrics
	awk '$1 == "vmscope_metric_names" {print $2}' <<<"$BODY"
}
refusals() { # REASON: the counter's value
	req GET /metrics
	awk -v r="reason=\"$1\"" 'index($0, "vmscope_ingest_refusals_total{" r "}") == 1 {print $2}' <<<"$BODY"
}
names_like() { e2e_psql "SELECT count(*) FROM metric_names WHERE name LIKE '$1'"; }

# bodies: the flood (17 x 4,000 names); N names for one host or several
python3 - "$E2E_DIR" "$NOW" <<'PY'
import json, sys
d, now = sys.argv[1], int(sys.argv[2])
def vm(prefix, n):
    return {"%s%d" % (prefix, k): k for k in range(n)}
json.dump([{"host": "evil-01", "ts": now - 200 + i, "vmstat": vm("flood%d_" % i, 4000)} for i in range(17)],
          open(d + "/flood.json", "w"))
json.dump({"host": "evil-01", "ts": now - 100, "vmstat": vm("many_", 301)}, open(d + "/host-over.json", "w"))
json.dump({"host": "evil-01", "ts": now - 99, "vmstat": vm("fits_", 290)}, open(d + "/host-fits.json", "w"))
json.dump([{"host": "evil-%02d" % h, "ts": now - 90, "vmstat": vm("spread%d_" % h, 250)} for h in range(2, 6)],
          open(d + "/token-over.json", "w"))
PY

# a real agent's first sample (its names enter the dictionary)
e2e_sample real-01 $((NOW - 300)) >"$E2E_DIR/real1.json"
post_as "$E2E_TOKEN" "$E2E_DIR/real1.json"
check_status 202 "a real sample before the flood"
n_names=$(e2e_psql "SELECT count(*) FROM metric_names")
n_dict=$(dict_size)
check "/metrics shows the dictionary's size ($n_dict)" test "${n_dict:-0}" -ge "$n_names"

# --- the flood: refused, nothing left behind
post_as "$E2E_TOKEN" "$E2E_DIR/flood.json"
check_status 400 "17 samples x 4,000 invented names"
check_contains "--max-new-names-per-token" "the 400 names the budget"
check_json_error "flood 400"
check_eq "$(names_like 'vmstat.flood%')" 0 "no flood name in metric_names"
check_eq "$(e2e_psql "SELECT count(*) FROM metric_names")" "$n_names" "metric_names unchanged"
check_eq "$(dict_size)" "$n_dict" "the dictionary's size in /metrics unchanged"
check_eq "$(e2e_psql "SELECT count(*) FROM hosts WHERE name = 'evil-01' AND samples > 0")" 0 "no flood sample stored"

# right after: the same token's real sample and a real new kernel counter
e2e_sample real-01 $((NOW - 290)) >"$E2E_DIR/real2.json"
post_as "$E2E_TOKEN" "$E2E_DIR/real2.json"
check_status 202 "a real sample after the flood"
e2e_sample real-01 $((NOW - 280)) 1000 ',"agent_version":"1"' |
	jq -c '.vmstat.nr_kernel_new_counter = 17' >"$E2E_DIR/real3.json"
post_as "$E2E_TOKEN" "$E2E_DIR/real3.json"
check_status 202 "a real new kernel counter after the flood"
req GET "/api/v1/hosts/real-01/metrics"
check_jq 'any(.metrics[]; .name == "vmstat.nr_kernel_new_counter")' "the new counter is stored and listed"
check_eq "$(dict_size)" $((n_dict + 1)) "the dictionary's size in /metrics counts the new counter"

# --- the per-host budget (300 an hour here)
post_as "$E2E_TOKEN" "$E2E_DIR/host-over.json"
check_status 400 "a host bringing 301 new names"
check_contains "host evil-01 would bring 301 new metric names" "the 400 names the host"
check_contains "--max-new-names-per-host" "the 400 names the per-host budget"
check_eq "$(names_like 'vmstat.many_%')" 0 "none of its names entered"
post_as "$E2E_TOKEN" "$E2E_DIR/host-fits.json"
check_status 202 "290 new names fit the host's budget"
# --- the per-token budget (1,000 an hour): 4 more hosts x 250 go over it
post_as "$E2E_TOKEN" "$E2E_DIR/token-over.json"
check_status 400 "four hosts x 250 new names on one token"
check_contains "--max-new-names-per-token" "the 400 names the per-token budget"
check_eq "$(names_like 'vmstat.spread%')" 0 "none of their names entered"
# known names go on; another token's new counter goes in
e2e_sample real-01 $((NOW - 270)) | jq -c '.vmstat.nr_kernel_new_counter = 18' >"$E2E_DIR/real4.json"
post_as "$E2E_TOKEN" "$E2E_DIR/real4.json"
check_status 202 "known names still go in on the spent token"
e2e_sample real-02 $((NOW - 260)) | jq -c '.vmstat.nr_other_new_counter = 3' >"$E2E_DIR/real5.json"
post_as "$TOKEN2" "$E2E_DIR/real5.json"
check_status 202 "another token brings a new counter"

# --- counted
check_eq "$(refusals new_names_per_token)" 2 "per-token refusals counted"
check_eq "$(refusals new_names_per_host)" 1 "per-host refusals counted"
req GET /metrics
check_contains 'vmscope_ingest_requests_refused_total 3' "the three 400s counted as refused"
check_contains 'vmscope_metric_names_max 65536' "/metrics shows the dictionary's capacity"
e2e_server_stop
e2e_done
