-- wrk script of `make load-compare`'s get204 workload: GETs of the URL given to wrk, no body.
-- Only the summary line scripts/load-compare.sh reads (as exchange.lua prints it): with no
-- request() here, wrk sends its one prepared request each time.
function done(summary, latency, requests)
    io.write(string.format("LOAD requests=%d errors_status=%d duration_us=%d p50_us=%d p99_us=%d\n",
        summary.requests, summary.errors.status, summary.duration, latency:percentile(50), latency:percentile(99)))
end
