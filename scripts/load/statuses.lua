-- wrk script for make cluster-check: GETs one path and counts the answers by status, so that a
-- run can show that no request was lost while a replica was killed. Argument: the path.
local counts = {}
local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    wrk.method = "GET"
    wrk.path = args[1] or "/api/v1/config/REF"
    statuses = {}
end

function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
    local merged = {}
    for _, thread in ipairs(threads) do
        local seen = thread:get("statuses")
        for status, count in pairs(seen) do merged[status] = (merged[status] or 0) + count end
    end
    local parts = {}
    for status, count in pairs(merged) do parts[#parts + 1] = status .. "=" .. count end
    table.sort(parts)
    io.write(string.format("STATUSES %s socket_errors=%d\n", table.concat(parts, " "),
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
