-- wrk script for make soak: a mix of what a gateway sees all day, each request tagged with its
-- kind in X-Request-Id (the gateway echoes it), so every answer is checked against the statuses
-- its kind may get. Arguments: responses file (fresh, unique: accepted once), forged file
-- (signed by a key the trust store does not hold), MVPD, thread count.
--   pass     GET /api/v1/config/REF, proxied                         200
--   form     POST a 2 KB form to a path the gateway only proxies       200, or the upstream's 404
--   exchange POST /api/v1/tokens/authn with a fresh response          204 (401 once reused)
--   forged   the same with a response signed by an untrusted key       401
--   broken   the same with a SAMLResponse that is not base64           400
--   health   GET /healthz, answered by the gateway                     200
local threads = {}

function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end

local function load_lines(file, step, limit)
    local lines = {}
    local number = 0
    for line in io.lines(file) do
        if number % step == id then lines[#lines + 1] = line end
        number = number + 1
        if limit and #lines >= limit then break end
    end
    return lines
end

function init(args)
    local step = tonumber(args[4]) or 1
    local prefix = "requestor=REF&deviceId=soak-device&mvpd=" .. (args[3] or "Cablevision") .. "&deviceType=iOS&SAMLResponse="
    fresh = {}
    for _, line in ipairs(load_lines(args[1], step)) do
        fresh[#fresh + 1] = prefix .. line
    end
    forged = {}
    for _, line in ipairs(load_lines(args[2], 1, 50)) do
        forged[#forged + 1] = prefix .. line
    end
    fresh_index = 1
    counter = 0
    -- One cycle of 40 requests: 26 pass, 6 form, 3 health, 2 forged, 2 broken, 1 exchange (sign-ins
    -- are rare next to the rest of the API; one in 40 lasts the minted responses ten minutes).
    cycle = { "pass", "pass", "form", "pass", "exchange", "pass", "pass", "health", "pass", "form",
              "pass", "forged", "pass", "pass", "pass", "pass", "form", "broken", "pass", "pass",
              "pass", "pass", "form", "pass", "health", "pass", "pass", "pass", "pass", "form",
              "pass", "forged", "pass", "pass", "health", "pass", "form", "broken", "pass", "pass" }
    make = {
        pass = function(tag) return wrk.format("GET", "/api/v1/config/REF", { ["X-Request-Id"] = tag }) end,
        health = function(tag) return wrk.format("GET", "/healthz", { ["X-Request-Id"] = tag }) end,
        form = function(tag)
            return wrk.format("POST", "/api/v1/soak/form", { ["X-Request-Id"] = tag, ["Content-Type"] = "application/x-www-form-urlencoded" },
                "requestor=REF&deviceId=soak-device&resource=soak&padding=" .. string.rep("x", 2048))
        end,
        broken = function(tag)
            return wrk.format("POST", "/api/v1/tokens/authn", { ["X-Request-Id"] = tag, ["Content-Type"] = "application/x-www-form-urlencoded" },
                "requestor=REF&deviceId=soak-device&mvpd=Cablevision&deviceType=iOS&SAMLResponse=%%%25not-base64%%")
        end,
    }
    tally = {}
end

function request()
    counter = counter + 1
    local kind = cycle[(counter % #cycle) + 1]
    local tag = kind .. "-" .. id .. "-" .. counter
    if kind == "exchange" then
        local body = fresh[fresh_index]
        if fresh_index > #fresh then
            -- Out of fresh responses: the first ones again, which the gateway must refuse as replays.
            body = fresh[((fresh_index - 1) % #fresh) + 1]
            kind = "replay"
            tag = kind .. "-" .. id .. "-" .. counter
        end
        fresh_index = fresh_index + 1
        return wrk.format("POST", "/api/v1/tokens/authn",
            { ["X-Request-Id"] = tag, ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
    elseif kind == "forged" then
        return wrk.format("POST", "/api/v1/tokens/authn",
            { ["X-Request-Id"] = tag, ["Content-Type"] = "application/x-www-form-urlencoded" }, forged[(counter % #forged) + 1])
    end
    return make[kind](tag)
end

local expected = {
    pass = { [200] = true }, health = { [200] = true }, form = { [200] = true, [404] = true },
    exchange = { [204] = true }, replay = { [401] = true }, forged = { [401] = true }, broken = { [400] = true },
}

function response(status, headers, body)
    local tag = headers["X-Request-Id"] or headers["x-request-id"] or ""
    local kind = string.match(tag, "^(%a+)%-") or "untagged"
    local key = kind .. ":" .. status
    tally[key] = (tally[key] or 0) + 1
    if not (expected[kind] and expected[kind][status]) then
        tally["unexpected"] = (tally["unexpected"] or 0) + 1
    end
end

function done(summary, latency, requests)
    local totals = {}
    for _, thread in ipairs(threads) do
        local t = thread:get("tally")
        for key, value in pairs(t) do totals[key] = (totals[key] or 0) + value end
    end
    local keys = {}
    for key in pairs(totals) do keys[#keys + 1] = key end
    table.sort(keys)
    for _, key in ipairs(keys) do io.write(string.format("SOAK_STATUS %s %d\n", key, totals[key])) end
    io.write(string.format("SOAK requests=%d connect=%d read=%d write=%d timeout=%d p50_us=%d p99_us=%d unexpected=%d\n",
        summary.requests, summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
        latency:percentile(50), latency:percentile(99), totals["unexpected"] or 0))
end
