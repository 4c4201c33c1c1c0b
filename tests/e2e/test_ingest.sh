#!/usr/bin/env bash
# test_ingest.sh - the HTTP server end to end, with curl against the real
# server and a real PostgreSQL: ingest answers and what is stored, auth,
# body limits, gzip, clock checks, hostile input, read API parameters,
# static files, and a database that is unreachable at start or drops the
# server's connections.
. "$(dirname "$0")/_lib.sh"

e2e_init ingest
WEB="$E2E_DIR/web"
mkdir -p "$WEB/sub"
echo '<!doctype html><title>vmscope</title>' >"$WEB/index.html"
echo 'console.log(1)' >"$WEB/app.js"
echo 'body{}' >"$WEB/sub/style.css"
echo '<svg xmlns="http://www.w3.org/2000/svg"/>' >"$WEB/logo.svg"
echo '{}' >"$WEB/app.js.map"
echo 'secret' >"$E2E_DIR/secret.txt"
E2E_WEB=$WEB e2e_server_start --max-body 262144

count_samples() {
	e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$1'"
}

NOW=$(e2e_now)

# --- ingest, and the rows visible through the read API ---
post "$(e2e_sample web-01 $((NOW - 20)) 1000)"
check_status 202 "one sample"
check_eq "$(json .accepted)" 1 "accepted count"
post "[$(e2e_sample web-01 $((NOW - 10)) 1100),$(e2e_sample web-01 "$NOW.5" 1300)]"
check_status 202 "array of two"
check_eq "$(json .accepted)" 2 "accepted count of the array"
check_eq "$(count_samples web-01)" 3 "three rows stored"

req GET /api/v1/hosts
check_status 200 "hosts"
check_eq "$(json '[.hosts[].host] | join(",")')" "web-01" "host listed"
req GET /api/v1/hosts/web-01
check_status 200 "one host"
check_eq "$(json .kernel)" "6.1.0-e2e" "host kernel"
req GET /api/v1/hosts/nohost
check_status 404 "unknown host"
check_json_error "unknown host"
req GET /api/v1/hosts/web-01/cgroups
check_status 200 "cgroups"
check_contains "/system.slice/e2e.service" "cgroup listed"
req GET "/api/v1/hosts/web-01/metrics"
check_status 200 "metric names"
check_contains "vmstat.pgpgin" "metric name listed"
req GET "/api/v1/hosts/web-01/series?metric=vmstat.pgpgin&since=$((NOW - 60))&until=$((NOW + 1))"
check_status 200 "series"
check_eq "$(json .kind)" "rate" "pgpgin is a rate"
# 100 pages over 10 s, then 200 over 10.5 s
check_eq "$(json '[.points[-2:][] | .[1] | if . == null then "null" else (. * 100 | round / 100 | tostring) end] | join(" ")')" "10 19.05" "rates between samples"
# a name the cgroup never reported: 404 with the close names it reports;
# one it reported, in a window without samples: 200 and no points
req GET "/api/v1/hosts/web-01/series?metric=meminfo.MemFree&cgroup=/system.slice/e2e.service&since=$((NOW - 60))"
check_status 404 "cgroup series of a metric the cgroup never reported"
check_json_error "cgroup series of a metric never reported"
check_contains "meminfo.MemFree was never reported by cgroup /system.slice/e2e.service" "the 404 names the metric"
req GET "/api/v1/hosts/web-01/series?metric=stat.anno&cgroup=/system.slice/e2e.service"
check_status 404 "a typo of a cgroup metric"
check_jq '.did_you_mean | index("stat.anon") != null' "the 404 suggests the close name"
req GET "/api/v1/hosts/web-01/series?metric=vmstat.pgpgin&since=$((NOW - 86400))&until=$((NOW - 82800))"
check_status 200 "a reported name, a window without samples"
check_jq '.points == []' "no points, not a 404"
req GET "/api/v1/hosts/web-01/series_batch?metrics=vmstat.pgpgin,vmstat.pgpgni"
check_status 404 "series_batch with a name never reported"
check_contains "metrics: vmstat.pgpgni was never reported by web-01" "the 404 names the batch's metric"
check_jq '.did_you_mean[0] == "vmstat.pgpgin"' "the batch's 404 suggests the close name"
# the batch's columns layout: the same values as points, four arrays a series
req GET "/api/v1/hosts/web-01/series_batch?metrics=vmstat.pgpgin,vmstat.pgscan_kswapd&since=$((NOW - 60))&until=$((NOW + 1))&points=4"
pts=$BODY
req GET "/api/v1/hosts/web-01/series_batch?metrics=vmstat.pgpgin,vmstat.pgscan_kswapd&since=$((NOW - 60))&until=$((NOW + 1))&points=4&layout=columns"
check_status 200 "series_batch, columns"
same=$(jq -n --argjson p "$pts" --argjson c "$BODY" '$c.layout == "columns" and ([range(0; 2) as $i | $c.series[$i] as $s | $p.series[$i] as $q
	| ($s | has("points") | not) and $s.ts == [$q.points[][0]] and $s.avg == [$q.points[][1]] and $s.min == [$q.points[][2]]
	  and $s.max == [$q.points[][3]] and ($s.ts | length) >= 2] | all)')
check_eq "$same" "true" "series_batch columns carry the points' values"
req GET "/api/v1/hosts/web-01/series_batch?metrics=vmstat.pgpgin&since=$((NOW - 60))&until=$((NOW + 1))&layout=columns"
check_jq '.series[0] | (.v | length) == (.ts | length) and (.ts | length) >= 2 and (has("avg") | not)' "series_batch columns, raw: ts and v"
req GET "/api/v1/hosts/web-01/series_batch?metrics=vmstat.pgpgin&layout=rows"
check_status 400 "series_batch, unknown layout"
check_contains "layout:" "the error names layout"
req GET "/api/v1/alerts?kind=trash"
check_status 400 "an alert kind the server does not raise"
check_contains "kind: unknown alert kind trash" "the 400 names the kind"
check_contains "thrash, swap_imbalance" "the 400 lists the kinds"
req GET "/api/v1/alerts?kind=compaction_stall"
check_status 200 "a known kind with no alert yet"
req GET "/api/v1/alerts?kind=kernel_regression&state=open"
check_status 200 "the fleet's kind (the regression banner's request) with no alert yet"
req GET "/api/v1/hosts/web-01/series?metric=stat.anon&cgroup=/system.slice/e2e.service&since=$((NOW - 60))&until=$((NOW + 1))"
check_status 200 "cgroup series"
check_eq "$(json '.points | length')" 3 "cgroup series points"

# downsampling: 30 samples, points=4 gives at most 4 buckets of [ts, avg, min, max]
batch=""
for i in $(seq 0 29); do batch+="${batch:+,}$(e2e_sample ds-01 $((NOW - 300 + i * 10)) $((1000 + i * 50)))"; done
post "[$batch]"
check_status 202 "batch of 30"
req GET "/api/v1/hosts/ds-01/series?metric=vmstat.pgpgin&since=$((NOW - 310))&until=$((NOW + 1))&points=4"
check_status 200 "downsampled series"
check_jq '(.points | length) >= 1 and (.points | length) <= 4 and all(.points[]; length == 4)' "at most 4 buckets of [ts, avg, min, max]"
req GET "/api/v1/hosts/ds-01/series?metric=vmstat.pgpgin&since=$((NOW - 310))&until=$((NOW + 1))"
check_eq "$(json '.points | length')" 30 "raw series has every sample"

# --- duplicates: accepted, stored once ---
post "$(e2e_sample web-01 $((NOW - 20)) 1000)"
check_status 202 "re-post of a stored sample"
check_eq "$(json .accepted)" 1 "duplicate counts as accepted"
check_eq "$(json '[.stored, .duplicates] | @csv')" '0,1' "and the answer says it was a duplicate, not stored again"
check_eq "$(count_samples web-01)" 3 "duplicate stored once"
# a different sample with the (host, ts) of a stored one: not stored, counted
post "[$(e2e_sample web-01 $((NOW - 20)) 5555),$(e2e_sample web-01 $((NOW - 19)) 5556)]"
check_eq "$(json '[.accepted, .stored, .duplicates] | @csv')" '2,1,1' "a colliding sample is counted in duplicates"

# --- one bad sample refuses the whole array ---
post "[$(e2e_sample bad-01 $((NOW - 5))),$(e2e_sample bad-01 "$NOW" | sed 's/"pgpgin":[0-9]*/"pgpgin":"12"/')]"
check_status 400 "array with one bad sample"
check_contains "could not parse sample 1: vmstat.pgpgin" "error names sample and field"
check_json_error "bad sample"
check_eq "$(count_samples bad-01)" 0 "nothing of the bad batch stored"

# --- auth ---
printf '%s' "$(e2e_sample auth-01 "$NOW")" >"$E2E_DIR/s.json"
req POST /api/v1/samples --data-binary @"$E2E_DIR/s.json"
check_status 401 "no token"
check_json_error "no token"
check_header "www-authenticate: bearer" "401 names the scheme"
req POST /api/v1/samples -H "Authorization: Bearer wrong-$E2E_TOKEN" --data-binary @"$E2E_DIR/s.json"
check_status 401 "wrong token"
req POST /api/v1/samples -H "Authorization: Basic $E2E_TOKEN" --data-binary @"$E2E_DIR/s.json"
check_status 401 "not a bearer token"
check_eq "$(count_samples auth-01)" 0 "nothing stored without a token"
# a refused body is read before the answer, so a client that does not wait
# for 100-continue (the agent) reads the 401 rather than a connection reset
head -c 300000 /dev/zero | tr '\0' ' ' >"$E2E_DIR/300k"
codes=$(for i in $(seq 20); do curl -s -o /dev/null -w '%{http_code} ' -H 'Expect:' \
	-H "Authorization: Bearer wrong-$E2E_TOKEN" --data-binary @"$E2E_DIR/300k" "$E2E_URL/api/v1/samples"; done)
check_eq "$codes" "$(printf '401 %.0s' $(seq 20))" "20 refused 300 kB uploads all read their 401"

# --- body limits and gzip ---
{ printf '['; printf '{"host":"big","ts":1,"vmstat":{}},%.0s' $(seq 8999); printf '{"host":"big","ts":1,"vmstat":{}}]'; } >"$E2E_DIR/big.json"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" --data-binary @"$E2E_DIR/big.json"
check_status 413 "body over --max-body"
check_json_error "413"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Transfer-Encoding: chunked' --data-binary @"$E2E_DIR/big.json"
check_status 413 "chunked body over --max-body"
head -c 50000000 /dev/zero | gzip -c >"$E2E_DIR/bomb.gz"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Encoding: gzip' --data-binary @"$E2E_DIR/bomb.gz"
check_status 413 "gzip bomb (50 MB of zeros in $(stat -c %s "$E2E_DIR/bomb.gz") bytes)"
e2e_sample gz-01 "$NOW" | gzip -c >"$E2E_DIR/s.gz"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Encoding: gzip' --data-binary @"$E2E_DIR/s.gz"
check_status 202 "gzip body"
check_eq "$(count_samples gz-01)" 1 "gzip sample stored"
printf 'not gzip' >"$E2E_DIR/notgz"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Encoding: gzip' --data-binary @"$E2E_DIR/notgz"
check_status 400 "corrupt gzip"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Encoding: br' --data-binary @"$E2E_DIR/s.json"
check_status 415 "unknown encoding"
check_json_error "415"

# --- time checks ---
post "$(e2e_sample skew-01 $((NOW + 3600)))"
check_status 400 "an hour ahead"
check_contains "clock skew" "clock skew named"
post "$(e2e_sample old-01 $((NOW - 31 * 86400)))"
check_status 400 "older than retention"
check_contains "retention" "retention named"
post "$(e2e_sample old-02 $((NOW - 29 * 86400)))"
check_status 202 "29 days old is within the retention"

# --- hostile input: 4xx JSON, nothing stored, server alive ---
{ head -c 100000 /dev/zero | tr '\0' '['; head -c 100000 /dev/zero | tr '\0' ']'; } >"$E2E_DIR/deep.json"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" --data-binary @"$E2E_DIR/deep.json"
check_status 400 "deeply nested JSON"
check_json_error "deep"
printf '{"host":"utf\xff\xfe","ts":%s,"vmstat":{}}' "$NOW" >"$E2E_DIR/bad-utf8.json"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" --data-binary @"$E2E_DIR/bad-utf8.json"
check_status 400 "invalid UTF-8"
check_json_error "invalid UTF-8"
post "{\"host\":\"huge-01\",\"ts\":$NOW,\"vmstat\":{\"pgpgin\":9223372036854775808}}"
check_status 400 "integer over 2^63-1"
check_json_error "huge integer"
post "{\"host\":\"huge-01\",\"ts\":$NOW,\"vmstat\":{\"pgpgin\":1e30}}"
check_status 400 "a real where an integer belongs"
check_contains "vmstat.pgpgin" "field named"
post "{\"host\":\"nan-01\",\"ts\":NaN,\"vmstat\":{}}"
check_status 400 "NaN"
post "{\"host\":\"dup-01\",\"host\":\"dup-02\",\"ts\":$NOW,\"vmstat\":{}}"
check_status 400 "duplicate keys"
check_contains "duplicate" "duplicate named"
for h in "x'; DROP TABLE samples; --" "../../etc/passwd" "a\\u0000b" "tab\\there" "semi;colon" "$(printf 'a%.0s' $(seq 254))"; do
	post "{\"host\":\"$h\",\"ts\":$NOW,\"vmstat\":{}}"
	check_status 400 "hostile host name ${h:0:30}"
	check_json_error "hostile host name"
done
post "{\"host\":\"cg-01\",\"ts\":$NOW,\"vmstat\":{},\"cgroups\":[{\"path\":\"/a/../../etc\",\"version\":2,\"memory_stat\":{}}]}"
check_status 400 "cgroup path with .."
check_contains "cgroups[0].path" "cgroup field named"
post '"a string"'
check_status 400 "not an object"
post ''
check_status 400 "empty body"
check_eq "$(e2e_psql "SELECT count(*) FROM hosts WHERE name NOT IN ('web-01','ds-01','gz-01','old-02') AND samples > 0")" 0 "no hostile host stored"
# the hosts refused for their timestamps are known without samples (clock_skew)
check_eq "$(e2e_psql "SELECT string_agg(name || ':' || refused_n, ' ' ORDER BY name) FROM hosts WHERE samples = 0")" \
	"old-01:1 skew-01:1" "the hosts refused for their timestamps are recorded, without samples"
check_eq "$(e2e_psql "SELECT count(*) FROM samples")" 36 "sample rows: exactly the accepted ones"

# --- routing and methods ---
req GET /api/v1/nothing
check_status 404 "unknown API path"
check_json_error "404"
req GET /no/such/file.js
check_status 404 "unknown file"
check_json_error "404 static"
req GET /api/v1/samples
check_status 405 "GET on ingest"
check_header "allow: post" "405 Allow header"
check_json_error "405"
req DELETE /api/v1/hosts
check_status 405 "DELETE on hosts"
check_header "allow: get, head" "405 Allow on a read"
req PUT /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" --data-binary @"$E2E_DIR/s.json"
check_status 405 "PUT on ingest"

# --- query parameters ---
for q in "limit=0" "limit=10001" "limit=abc" "state=closed" "since=yesterday" "until=2026-02-30T00:00:00Z" \
	 "host=bad%20host" "cgroup=relative" "kind=DROP%20TABLE"; do
	req GET "/api/v1/alerts?$q"
	check_status 400 "alerts $q"
	check_contains "${q%%=*}:" "alerts error names ${q%%=*}"
done
req GET "/api/v1/alerts?state=open&limit=10000&since=2026-01-01T00:00:00Z&until=$NOW"
check_status 200 "alerts with valid parameters"
check_jq '.alerts | type == "array"' "alerts is a list"
for q in "" "metric=bad%20name" "metric=vmstat.pgpgin&points=-1" "metric=vmstat.pgpgin&points=10001" \
	 "metric=vmstat.pgpgin&since=x" "metric=vmstat.pgpgin&since=10&until=5" \
	 "metric=vmstat.pgpgin&cgroup=%2Fa%0Ab" "metric=vmstat.pgpgin&cgroup=%2Fa%2F..%2Fb" "metric=vmstat.pgpgin&since=0&until=$NOW"; do
	req GET "/api/v1/hosts/web-01/series?$q"
	check_status 400 "series ?$q"
	check_json_error "series ?$q"
done
req GET "/api/v1/hosts/web-01/series?metric=vmstat.pgpgin&since=x"
check_contains "since:" "series error names since"
req GET "/api/v1/fleet?window=5"
check_status 400 "fleet window"
check_contains "window:" "fleet error names window"
# the sparklines are 5-minute rollups: 600 s hold at most 3 points
req GET "/api/v1/fleet?window=600&points=10"
check_status 400 "fleet points beyond the window's 5-minute buckets"
check_contains "points: expected 1 to 3 for window=600" "the error names the points allowed"
req GET "/api/v1/fleet?window=600&points=3"
check_status 200 "fleet"
# state follows the open alerts (on a slow machine host_silent may already be open)
check_jq '[.hosts[] | select(.host == "web-01")][0] as $h
	| $h.state == (if ($h.open_alerts | length) == 0 then "ok"
	               elif any($h.open_alerts[]; .severity == "critical") then "critical" else "warning" end)
	and ($h.stale | type) == "boolean"
	and ($h.spark | has("psi_memory_some") and has("refault_file") and has("reclaim_efficiency")
	     and has("swap_in") and has("swap_out"))
	and ($h.spark.psi_memory_some | length) >= 1 and ($h.spark.psi_memory_some | length) <= 10' \
	"fleet has the host, its state and sparklines"

# --- static files ---
req GET /
check_status 200 "index"
check_header "content-type: text/html" "index MIME"
check_contains "vmscope" "index body"
for f in app.js:text/javascript sub/style.css:text/css logo.svg:image/svg+xml app.js.map:application/json; do
	req GET "/${f%%:*}"
	check_status 200 "static ${f%%:*}"
	check_header "content-type: ${f#*:}" "MIME of ${f%%:*}"
done
for p in "/../secret.txt" "/%2e%2e/secret.txt" "/sub/%2e%2e/%2e%2e/secret.txt" "/..%2fsecret.txt" "/sub/..%5c..%5csecret.txt"; do
	req GET "$p" --path-as-is
	check_status 404 "traversal $p"
	if [[ "$BODY" == *secret* && "$BODY" != *error* ]]; then bad "traversal $p leaked the file"; else ok; fi
done

# --- keep-alive: GETs (answered or refused) leave the connection open for the next request ---
curl -sv -o /dev/null -o /dev/null -o /dev/null "$E2E_URL/healthz" "$E2E_URL/no-such-page" "$E2E_URL/api/v1/hosts" \
	>"$E2E_DIR/keepalive.txt" 2>&1
check_eq "$(grep -c 'Re-using existing connection' "$E2E_DIR/keepalive.txt")" 2 "three GETs share one connection"
check_eq "$(grep -ci '^< connection: close' "$E2E_DIR/keepalive.txt")" 0 "no GET answer closes the connection"
curl -s -I "$E2E_URL/healthz" >"$E2E_DIR/head.txt"
check "HEAD is answered" grep -q '^HTTP/1.1 200' "$E2E_DIR/head.txt"

# --- health and metrics ---
req GET /healthz
check_status 200 "healthz"
check_eq "$(json .database)" ok "healthz database ok"
req GET /metrics
check_status 200 "metrics"
check_contains 'vmscope_http_requests_total{code="202"}' "request counter"
check_contains "vmscope_ingest_samples_accepted_total" "ingest counter"

# --- the pool reconnects after the database drops our connections ---
e2e_admin "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '$E2E_NAME' AND pid <> pg_backend_pid()" >/dev/null
got=
for i in $(seq 50); do
	post "$(e2e_sample reconnect-01 $((NOW - 100 + i)))"
	[ "$STATUS" = 202 ] && { got=1; break; }
	[ "$STATUS" = 503 ] || break
	sleep 0.2
done
check_eq "${got:-$STATUS}" 1 "ingest works again after the connections were killed"

e2e_server_stop

# --- a database that is unreachable: 503, then recovery when it appears ---
LATE="vmscope_e2e_late_$$"
E2E_SERVER_DB=$(e2e_conninfo "$LATE") E2E_WAIT_HEALTHY=0 e2e_server_start
req GET /healthz
check_status 503 "healthz while the database is missing"
check_json_error "healthz 503"
post "$(e2e_sample late-01 "$NOW")"
check_status 503 "ingest while the database is missing"
check_header "retry-after:" "503 has Retry-After"
req GET /api/v1/hosts
check_status 503 "reads while the database is missing"
e2e_db_create "$LATE"
for _ in $(seq 100); do
	req GET /healthz
	[ "$STATUS" = 200 ] && break
	sleep 0.1
done
check_status 200 "healthz once the database exists"
post "$(e2e_sample late-01 "$NOW")"
check_status 202 "ingest once the database exists"
e2e_server_stop

# an address where nothing listens; with a read token and a rate limit,
# which are checked before the database is needed
READ_TOKEN=read-token-$RANDOM$RANDOM
E2E_SERVER_DB="host=127.0.0.1 port=$("$E2E_ROOT/scripts/freeport.sh") dbname=x user=x connect_timeout=2" \
	E2E_WAIT_HEALTHY=0 E2E_WEB=$WEB e2e_server_start --read-token "$READ_TOKEN" --rate-limit 1
req GET /healthz
check_status 503 "healthz with nothing listening (open without the read token)"
post "$(e2e_sample down-01 "$NOW")"
check_status 503 "ingest with nothing listening"
# a burst: at 1/s at least one of eight posts sent at once must be limited,
# however slow this machine is (one after the other, each curl could take
# longer than the bucket's refill on a loaded machine)
e2e_sample down-01 "$NOW" >"$E2E_DIR/burst.json"
bpids=()
for i in 1 2 3 4 5 6 7 8; do
	curl -s -o "$E2E_DIR/burst-body-$i" -D "$E2E_DIR/burst-hdr-$i" -w '%{http_code}\n' \
		-H "Authorization: Bearer $E2E_TOKEN" \
		--data-binary @"$E2E_DIR/burst.json" "$E2E_URL/api/v1/samples" >"$E2E_DIR/burst-$i" &
	bpids+=($!)
done
wait "${bpids[@]}"
check "a burst of 8 ingests at once with --rate-limit 1 gets a 429 ($(cat "$E2E_DIR"/burst-* | sort | uniq -c | tr -s ' ' | tr '\n' ','))" \
	grep -q '^429$' "$E2E_DIR"/burst-*
# the headers and body of one of the burst's 429s (read from the burst
# itself: a request sent after it may find the bucket refilled when each
# curl takes over a second on a loaded machine)
STATUS= BODY= HEADERS=
for i in 1 2 3 4 5 6 7 8; do
	if grep -q '^429$' "$E2E_DIR/burst-$i"; then
		STATUS=429
		BODY=$(cat "$E2E_DIR/burst-body-$i")
		HEADERS=$(tr 'A-Z' 'a-z' <"$E2E_DIR/burst-hdr-$i" | tr -d '\r')
		break
	fi
done
check_status 429 "a burst of ingests with --rate-limit 1"
check_header "retry-after: 1" "429 has Retry-After"
check_json_error "429"
req GET /api/v1/hosts
check_status 401 "reads need the read token"
check_json_error "read 401"
req GET /api/v1/hosts -H "Authorization: Bearer wrong-$READ_TOKEN"
check_status 401 "reads with a wrong read token"
req GET /api/v1/hosts -H "Authorization: Bearer $READ_TOKEN"
check_status 503 "reads with the read token pass auth"
req GET "/api/v1/alerts?token=$READ_TOKEN"
check_status 503 "read token as ?token="
req GET /metrics
check_status 401 "/metrics needs the read token"
req GET /
check_status 200 "dashboard files stay open"
e2e_server_stop

# --- refuses to start without a token ---
out=$("$SERVER" --listen 127.0.0.1:1 --db "$E2E_DB" 2>&1)
rc=$?
check_eq "$rc" 2 "exit code without a token"
if [[ "$out" == *"no ingest token"* ]]; then ok; else bad "no clear message without a token: $out"; fi

e2e_done
