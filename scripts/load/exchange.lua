-- wrk script: POST /api/v1/tokens/authn, cycling through pre-minted cookbook-encoded responses
-- (one per line in the file given after --), each used once per run so replay protection
-- accepts it. Thread i takes lines i, i+T, i+2T, ...
local threads = {}
local counter = 0

function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end

function init(args)
    bodies = {}
    local file = args[1] or "responses.txt"
    local prefix = "requestor=REF&deviceId=load-device&mvpd=" .. (args[2] or "Cablevision") .. "&deviceType=iOS&SAMLResponse="
    for line in io.lines(file) do
        bodies[#bodies + 1] = prefix .. line
    end
    step = tonumber(args[3]) or 2
    index = id + 1
    wrk.method = "POST"
    wrk.path = "/api/v1/tokens/authn"
    wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end

function request()
    local body = bodies[index]
    index = index + step
    if index > #bodies then index = id + 1 end
    return wrk.format(nil, nil, nil, body)
end

function done(summary, latency, requests)
    io.write(string.format("LOAD requests=%d errors_status=%d duration_us=%d p50_us=%d p99_us=%d\n",
        summary.requests, summary.errors.status, summary.duration, latency:percentile(50), latency:percentile(99)))
end
