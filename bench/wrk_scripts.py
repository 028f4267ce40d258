"""The wrk scripts bench/bench.py's rows send: a miss's upstream calls in turn (row 4b), every
product once (row 6), and floods of distinct guests and usernames (rows 9e and 9f)."""


def lua_sequence(path, calls, token):
    """A wrk script that sends `calls` (method, request-uri) in turn with the token."""
    entries = ",\n".join(
        '  {"%s", "%s"}' % (method, uri.replace("\\", "\\\\").replace('"', '\\"'))
        for method, uri in calls
    )
    path.write_text(
        f"""local calls = {{
{entries}
}}
local i = 0
local headers = {{ ["Authorization"] = "Bearer {token}", ["Accept"] = "application/json" }}
request = function()
  i = i % #calls + 1
  return wrk.format(calls[i][1], calls[i][2], headers)
end
"""
    )
    return path


def lua_fill(path, first_id, last_id, admin_key):
    """A one-thread wrk script that reads every product id once, then ends wrk (wrk itself
    would wait out its whole -d)."""
    path.write_text(
        f"""local nextid, last = {first_id}, {last_id}
request = function()
  local id = nextid
  if id > last then id = last end
  nextid = nextid + 1
  return wrk.format("GET", "/api/rest/products/" .. id, {{ ["Accept"] = "application/json", ["Authorization"] = "Bearer {admin_key}" }})
end
response = function(status, headers, body)
  if nextid > last + 256 then os.exit(0) end
end
"""
    )
    return path


# Both floods: each wrk thread seeds its own random generator, and every request comes from
# a random (made-up) client address.
_RANDOM_CLIENT = """
local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end
function init(args)
  math.randomseed(os.time() * 1000 + seed)
end
local function random_ip()
  return math.random(1, 223) .. "." .. math.random(0, 255) .. "." .. math.random(0, 255) .. "." .. math.random(1, 254)
end
"""

GUEST_FLOOD = _RANDOM_CLIENT + """
request = function()
  return wrk.format("GET", "/api/rest/products/1", {["X-Forwarded-For"] = random_ip(), ["Accept"] = "application/json"})
end
"""

USERNAME_FLOOD = _RANDOM_CLIENT + """
request = function()
  local user = "user" .. math.random(1, 2000000000) .. "@example.com"
  local body = '{"username":"' .. user .. '","password":"wrong-password"}'
  return wrk.format("POST", "/api/rest/auth/token",
    {["X-Forwarded-For"] = random_ip(), ["Accept"] = "application/json", ["Content-Type"] = "application/json"}, body)
end
"""
