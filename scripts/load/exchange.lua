-- wrk script: POST /api/v1/tokens/authn, cycling through pre-minted cookbook-encoded responses
-- (one per line in the file given after --), each used once per run so replay protection
-- accepts it. Thread i takes lines i, i+T, i+2T, ... Arguments: file, MVPD, threads, path, and
-- optionally how many lines to load (pass-through runs need a few thousand distinct bodies, not all).
local threads = {}
local counter = 0

function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end

-- Each thread formats only its own share of the requests, once, in init: wrk and the servers
-- share the machine's cores, so the per-request work of the load generator is kept to handing
-- over a prepared string (formatting an ~11 KB request per call cost wrk CPU the servers need).
function init(args)
    requests = {}
    local file = args[1] or "responses.txt"
    local prefix = "requestor=REF&deviceId=load-device&mvpd=" .. (args[2] or "Cablevision") .. "&deviceType=iOS&SAMLResponse="
    local step = tonumber(args[3]) or 2
    wrk.method = "POST"
    wrk.path = args[4] or "/api/v1/tokens/authn"
    wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
    local line_number = 0
    local limit = tonumber(args[5])
    for line in io.lines(file) do
        if limit and limit > 0 and #requests >= limit then break end
        if line_number % step == id then
            requests[#requests + 1] = wrk.format(nil, nil, nil, prefix .. line)
        end
        line_number = line_number + 1
    end
    index = 1
end

function request()
    local prepared = requests[index]
    index = index + 1
    if index > #requests then index = 1 end
    return prepared
end

function done(summary, latency, requests)
    io.write(string.format("LOAD requests=%d errors_status=%d duration_us=%d p50_us=%d p99_us=%d\n",
        summary.requests, summary.errors.status, summary.duration, latency:percentile(50), latency:percentile(99)))
end
