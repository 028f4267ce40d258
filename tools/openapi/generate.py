"""Writes docs/openapi.json, the OpenAPI 3.1 document of the gateway's served surface.

    python3 tools/openapi/generate.py            # rewrite docs/openapi.json
    python3 tools/openapi/generate.py --check    # exit 1 if docs/openapi.json is not what it writes

The document is this script's output: edit the script (the operations below, the prose in
info.md, the examples in examples/), never the JSON. The field schemas are read from the
default mappings (mappings/magento2/*.toml), so a mapping change is one run away; the
operations, user types, messages and statuses are written here by hand, because the handlers
dispatch methods themselves (403 before 405) and bodies are shaped by the mappings at run time:
there is nothing in the Rust types to derive them from. tests/api/openapi.rs and
tests/e2e/openapi.rs keep the result equal to the router, the code's messages and real answers;
tests/api/openapi.rs also runs --check.
"""
import json, tomllib, sys, os
HERE = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(HERE))
CHECK = "--check" in sys.argv[1:]
M = {}
for f in os.listdir(f"{root}/mappings/magento2"):
    M[f[:-5]] = tomllib.load(open(f"{root}/mappings/magento2/{f}", "rb"))

def ftype(t, field=None):
    n = lambda s: {**s, "type": [s["type"], "null"]}
    if t == "string": return n({"type": "string"})
    if t == "int": return n({"type": "integer"})
    if t == "int_string": return n({"type": "string", "pattern": "^-?[0-9]+$", "description": "an integer written as a string"})
    if t == "decimal4": return n({"type": "string", "pattern": "^-?[0-9]+\\.[0-9]{4}$", "description": "a decimal with four decimals, as a string"})
    if t == "number": return n({"type": "number"})
    if t == "flag": return {"type": ["string", "null"], "enum": ["0", "1", None], "description": "\"1\" or \"0\""}
    if t in ("bool", "nonempty"): return {"type": "boolean"}
    if t == "datetime": return n({"type": "string", "description": "YYYY-MM-DD HH:MM:SS"})
    if t == "datetime_iso": return n({"type": "string", "description": "ISO 8601"})
    if t in ("group_price_original", "tier_price_original"): return {"type": "array", "items": {"type": "object"}}
    if t == "media_url": return n({"type": "string", "format": "uri"})
    if t == "list": return {"type": ["array", "null"], "items": {"type": ["string", "number", "object", "null"]}}
    if t in ("group_price",): return {"type": "array", "items": {"$ref": "#/components/schemas/GroupPrice"}}
    if t in ("tier_price",): return {"type": "array", "items": {"$ref": "#/components/schemas/TierPrice"}}
    if t == "object": return {"type": ["object", "null"]}
    return {}

def field_schema(res, name):
    f = M[res]["fields"].get(name)
    if f is None:
        return {}
    s = ftype(f.get("type", "string"))
    if f.get("type") == "object" and f.get("object") == "stock_data":
        s = {"anyOf": [{"$ref": "#/components/schemas/StockData"}, {"type": "null"}]}
    return s

def out_name(res, name):
    """The key a field is written under (`name = "..."` in the mapping, else its own)."""
    return M[res]["fields"].get(name, {}).get("name", name)

def view_schema(res, view, kind, title):
    names = M[res]["view"][view][kind]
    props = {out_name(res, n): field_schema(res, n) for n in names}
    return {"type": "object", "title": title, "properties": props, "additionalProperties": False,
            "description": f"Fields of the {view} view ({kind}) with the default mappings (`mappings/magento2/{res}.toml`); an operator's mapping edit changes them."}

schemas = {}
V = {"admin": "Admin", "customer": "Customer", "guest": "Guest"}
K = {"list": "ListItem", "single": "", "category": "CategoryItem", "own": "Own"}
for res, name in [("product", "Product"), ("stock_item", "StockItem"), ("image", "Image"), ("customer", "Customer"), ("address", "Address"), ("order", "Order"), ("order_address", "OrderAddress"), ("order_item", "OrderItem"), ("order_comment", "OrderComment")]:
    for view in M[res]["view"]:
        for kind in M[res]["view"][view]:
            if kind not in K: continue
            t = f"{name}{V[view]}{K[kind]}"
            schemas[t] = view_schema(res, view, kind, t)
# orders: nested lists
for t, s in list(schemas.items()):
    if t.startswith("Order") and not t.startswith("OrderAddress") and not t.startswith("OrderItem") and not t.startswith("OrderComment"):
        view = "Admin" if "Admin" in t else "Customer"
        s["properties"]["addresses"] = {"type": "array", "items": {"$ref": f"#/components/schemas/OrderAddress{view}ListItem"}}
        s["properties"]["order_items"] = {"type": "array", "items": {"$ref": f"#/components/schemas/OrderItem{view}ListItem"}}
# write bodies
def write_schema(res, view, kind, title, required=None):
    names = M[res]["view"][view][kind]
    props = {out_name(res, n): field_schema(res, n) for n in names}
    for p in props.values():
        p.pop("pattern", None)
    s = {"type": "object", "title": title, "properties": props,
         "description": f"Writable fields of the {view} view (`{kind}` in `mappings/magento2/{res}.toml`); other fields are ignored. Numbers may be sent as numbers or strings."}
    if required: s["required"] = required
    return s
# relax write types: accept numbers or strings for scalar fields
def relax(s):
    for name, p in s["properties"].items():
        if "$ref" in p or "anyOf" in p or p.get("type") in ("array", ["array", "null"], "object", ["object", "null"], "boolean"):
            continue
        s["properties"][name] = {"type": ["string", "number", "boolean", "null"], "description": p.get("description", "")}
    return s
pv = M["product"]["view"]["admin"]
schemas["ProductCreate"] = relax(write_schema("product", "admin", "write", "ProductCreate", pv["required"]))
schemas["ProductCreate"]["description"] = "A simple product. Required: " + ", ".join(pv["required"]) + " (checked before any upstream call). `stock_data`, `group_price` and `tier_price` are nested."
schemas["ProductUpdate"] = relax(write_schema("product", "admin", "write", "ProductUpdate"))
schemas["ProductUpdate"]["description"] = "Only the fields to change. `type_id` and `attribute_set_id` are ignored; changing `sku` is refused."
sv = M["stock_item"]["view"]["admin"]
schemas["StockItemUpdate"] = relax(write_schema("stock_item", "admin", "write", "StockItemUpdate"))
schemas["StockItemBatchItem"] = {"allOf": [{"$ref": "#/components/schemas/StockItemUpdate"}], "type": "object", "required": ["item_id"],
    "properties": {"item_id": {"type": ["integer", "string"], "description": "the stock item's id (an XML attribute `item_id` of the `data_item`, or a field)"}}}
cv = M["customer"]["view"]["admin"]
schemas["CustomerCreate"] = relax(write_schema("customer", "admin", "create", "CustomerCreate", cv["required"]))
schemas["CustomerCreate"]["properties"]["password"] = {"type": "string", "minLength": 7, "description": "at least 7 characters; Magento may demand more"}
schemas["CustomerUpdateAdmin"] = relax(write_schema("customer", "admin", "update", "CustomerUpdateAdmin"))
schemas["CustomerUpdateCustomer"] = relax(write_schema("customer", "customer", "update", "CustomerUpdateCustomer"))
av = M["address"]["view"]["admin"]
schemas["AddressWrite"] = relax(write_schema("address", "admin", "write", "AddressWrite"))
schemas["AddressWrite"]["properties"]["street"] = {"type": ["array", "string"], "items": {"type": "string"}, "description": "lines; past the second they are joined into the second with \"; \""}
schemas["AddressWrite"]["properties"]["country_id"] = {"type": "string", "minLength": 2, "maxLength": 3}
schemas["AddressWrite"]["properties"]["region"] = {"type": "string", "description": "a region name or code; required for countries with regions"}
schemas["AddressCreate"] = {"allOf": [{"$ref": "#/components/schemas/AddressWrite"}], "required": av["required"] + ["country_id"]}
schemas["ImageCreate"] = {"type": "object", "required": ["file_mime_type", "file_content"], "properties": {
    "file_mime_type": {"type": "string", "description": "image/jpeg, image/png or image/gif"},
    "file_content": {"type": "string", "contentEncoding": "base64"},
    "file_name": {"type": "string", "description": "default: image, image_2, image_3, ..."},
    "label": {"type": "string"}, "position": {"type": ["integer", "string"]}, "exclude": {"type": ["integer", "string"]},
    "types": {"type": "array", "items": {"enum": ["image", "small_image", "thumbnail"]}}}}
schemas["ImageUpdate"] = {"type": "object", "properties": {k: v for k, v in schemas["ImageCreate"]["properties"].items()}}
schemas["GroupPrice"] = {"type": "object", "properties": {"website_id": {"type": ["string", "integer"]}, "cust_group": {"type": ["string", "integer"]}, "price": {"type": ["string", "number"]}}}
schemas["TierPrice"] = {"type": "object", "properties": {"website_id": {"type": ["string", "integer"]}, "cust_group": {"type": ["string", "integer"]}, "price": {"type": ["string", "number"]}, "price_qty": {"type": ["string", "number"]}}}
schemas["StockData"] = {"type": "object", "description": "the product's stock item, as the stock item resource writes it"}
schemas["Error"] = {"type": "object", "required": ["messages"], "additionalProperties": False,
    "description": "Every error, in the negotiated format (XML: the same tree under `<service_api>`, entries as `<data_item>`). The HTTP status is the code.",
    "properties": {"messages": {"type": "object", "additionalProperties": False, "required": ["error"], "properties": {"error": {"type": "array", "minItems": 1, "items": {"type": "object", "additionalProperties": False, "required": ["code", "message"], "properties": {"code": {"type": "integer"}, "message": {"type": "string"}}}}}}}}
schemas["StockBatchResult"] = {"type": "object", "additionalProperties": False, "properties": {g: {"type": "array", "items": {"type": "object", "additionalProperties": False, "required": ["item_id", "message", "code"], "properties": {"item_id": {"type": ["integer", "string", "null"]}, "message": {"type": "string"}, "code": {"type": "integer"}}}} for g in ("success", "error")},
    "description": "Always 207. `success` entries: code 200, `Resource updated successful.`; `error` entries: code 404 (no such item) or 400 (a bad value, with the message)."}
schemas["Credentials"] = {"type": "object", "required": ["username", "password"], "properties": {"username": {"type": "string", "description": "the customer's e-mail"}, "password": {"type": "string"}}}
schemas["CustomerToken"] = {"type": "object", "additionalProperties": False, "required": ["access_token", "token_type", "expires_in", "customer_id"], "properties": {
    "access_token": {"type": "string"}, "token_type": {"const": "Bearer"}, "expires_in": {"type": "integer", "description": "seconds (STOREGATE_TOKEN_TTL_SECS)"}, "customer_id": {"type": "integer"}}}
schemas["PurgeRequest"] = {"type": "object", "properties": {"tags": {"type": ["array", "string"], "items": {"type": "string"}, "description": "gateway tags (p:<id>, s:<sku>, c:<id>, pl, stores) or Magento's (cat_p_<id>, cat_p, cat_c_<id>, cat_c_p_<id>); a list or one comma-separated string"}, "all": {"type": "boolean"}}}
schemas["ShadowReport"] = {"type": "object", "required": ["since", "sample", "min_compared", "counts", "routes"], "properties": {
    "since": {"type": "string", "description": "when the count began (UTC)"}, "sample": {"type": "number"}, "min_compared": {"type": "integer"},
    "recheck_secs": {"type": "integer"}, "counts": {"type": "string", "description": "`fleet` (Redis), `instance`, or `instance (Redis unreachable)`"},
    "serving": {"type": "string"}, "candidate": {"type": "string"}, "serve": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "STOREGATE_SHADOW_SERVE: percent by route class"},
    "routes": {"type": "array", "items": {"type": "object", "properties": {
        "route": {"type": "string", "description": "`GET /products/:id`"}, "user_type": {"type": "string"}, "verdict": {"enum": ["ready", "not ready", "too few"]},
        **{k: {"type": "integer"} for k in ["compared", "matched", "differed", "noise", "lag", "error", "timeout", "not_compared", "skipped", "pending"]},
        "differences": {"type": "array", "items": {"type": "object", "properties": {
            "path": {"type": "string", "description": "template form: `tier_price[].price`, `{id}.name`, `(status)`"},
            "class": {"enum": ["value", "missing", "extra", "type", "order", "status"]},
            "count": {"type": "integer", "description": "comparisons where it still differed at the recheck"}, "lag": {"type": "integer"}, "noise": {"type": "integer"},
            "example": {"type": "object", "description": "`request` (path and query), `serving` and `candidate` values (a `{\"digest\"}` for personal data; absent where a side had none)"}}}}}}},
    "served": {"type": "array", "items": {"type": "object", "properties": {"class": {"type": "string"}, "candidate": {"type": "integer"}, "fallback": {"type": "integer"}}}}}}
schemas["PurgeResult"] = {"type": "object", "additionalProperties": False, "required": ["all", "tags"], "properties": {"all": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}, "description": "the tags purged, after translation"}}}
schemas["ProductCategoryLink"] = {"type": "object", "additionalProperties": False, "required": ["category_id"], "properties": {"category_id": {"type": "string", "pattern": "^[0-9]+$"}}}
schemas["ProductWebsiteLink"] = {"type": "object", "additionalProperties": False, "required": ["website_id"], "properties": {"website_id": {"type": "string", "pattern": "^[0-9]+$"}}}
schemas["ProductCategoryAssign"] = {"type": "object", "required": ["category_id"], "properties": {"category_id": {"type": ["integer", "string"], "description": "digits only"}}}
schemas["ProductWebsiteAssign"] = {"type": "object", "required": ["website_id"], "properties": {"website_id": {"type": ["integer", "string"], "description": "digits only"}, "copy_to_stores": {"type": "array", "description": "refused: 400 (Magento 2 has no copy of store view values)"}}}
schemas["OrderCommentCreate"] = {"type": "object", "properties": {"comment": {"type": "string"}, "status": {"type": "string", "description": "the order's new status; empty or absent keeps it"}, "is_customer_notified": {"type": ["integer", "string", "boolean"], "description": "0 or 1"}, "is_visible_on_front": {"type": ["integer", "string", "boolean"], "description": "0 or 1; customers see only these"}}}
schemas["WarmStart"] = {"type": "object", "additionalProperties": False, "description": "The start's warm-up (STOREGATE_WARM_START): the lookups every request reads loaded, the answers that were hot before the restart refilled. Until it is done the instance is warming (503); it is done within its bound (30 s by default) however far it got.", "required": ["lookups", "product_ids", "hot_keys", "warmed", "failed", "millis"], "properties": {"lookups": {"type": "array", "items": {"type": "string"}, "description": "lookups loaded (store views, store configs, countries)"}, "lookups_failed": {"type": "array", "items": {"type": "string"}, "description": "lookups the store failed to give, and why; requests fetch them when they need them"}, "product_ids": {"type": "integer", "description": "product ids whose SKU is known"}, "hot_keys": {"type": "integer", "description": "answers the record of hot keys named that this instance refills (Guest and Admin reads)"}, "warmed": {"type": "integer", "description": "answers refilled"}, "failed": {"type": "integer", "description": "answers whose refill failed"}, "cold": {"type": "string", "description": "why there was nothing to refill: no record (a first start), one not whole, of another version or another store, or the warm start off"}, "stopped": {"type": "string", "description": "why the refill stopped before the end: time ran out, the store failing"}, "millis": {"type": "integer", "description": "how long the warm-up took (so far)"}}}
schemas["Readiness"] = {"type": "object", "additionalProperties": False, "required": ["status", "upstream", "circuit"], "properties": {"status": {"enum": ["ready", "not_ready", "warming"], "description": "warming (503): the start's warm-up is not done yet (`warm_start`)"}, "warm_start": {"$ref": "#/components/schemas/WarmStart"}, "upstream": {"enum": ["up", "down", "refused"], "description": "refused: Magento answers but refuses the integration token (401/403); the instance is not ready"}, "reason": {"type": "string", "description": "with upstream refused: Magento's refusal and what to check"}, "circuit": {"enum": ["closed", "open", "half_open"]}, "redis": {"enum": ["up", "down"], "description": "only with STOREGATE_REDIS_URL; Redis down does not make the instance unready"}, "oauth_store": {"enum": ["up", "degraded", "down"], "description": "the OAuth store (STOREGATE_DATABASE_URL, or the SQLite file): degraded when it is reachable but does not answer within STOREGATE_DATABASE_TIMEOUT_MS (a locked table, a hung server), down when it cannot be reached; neither makes the instance unready"}, "oauth_store_error": {"type": "string", "description": "with oauth_store degraded or down: why, naming the store (never its password)"}, "rate_limits": {"enum": ["fleet", "instance", "degraded"], "description": "with rate limits or the sign-in guard on: counted across the fleet in Redis, by this instance alone (no Redis), or degraded (Redis down: each instance alone until it is back, serving)"}}}

def ref(n): return {"$ref": f"#/components/schemas/{n}"}
def keyed(n): return {"type": "object", "additionalProperties": ref(n), "description": "JSON: an object keyed by id, in the list's order. XML: one `<data_item>` per record."}
def arr(n): return {"type": "array", "items": ref(n), "description": "JSON: an array. XML: one `<data_item>` per record."}
def orders_keyed(n): return {"type": "object", "additionalProperties": ref(n), "description": "JSON: an object keyed by order id. XML: one `<data_item_<order id>>` element per order."}

# ---------------- messages ----------------
COMMON = {
 "400": ["Invalid request method", "Request URL is not valid: its path and query must be UTF-8 once percent-decoded.", "Invalid version \"<v>\" requested.", "Only one Authorization header may be sent.", "The request head could not be read.", "Send one credential: an Authorization header or OAuth parameters, not both."],
 "408": ["The request body did not arrive in time."],
 "414": ["Request-URI too long."],
 "431": ["Request header fields too large."],
 "401": ["The access token is invalid.", "The access token has expired.", "The access token has been revoked.", "Unsupported authorization scheme; use Bearer or OAuth."],
 "403": ["Access denied"],
 "404": ["Request does not match any route."],
 "406": ["Server can not understand Accept HTTP header media type."],
 "429": ["Too many requests. Try again in <n> seconds."],
 "500": ["Resource internal error."],
 "502": ["The store back end sent an invalid response."],
 "503": ["The store back end is unavailable. Try again later.", "The service is overloaded. Try again later.", "The service is temporarily unavailable. Try again later.", "The OAuth sign-in store is unavailable. Try again later.", "The shared state store (Redis) is unavailable. Try again later."],
 "504": ["The store back end did not answer in time.", "The change may or may not have been made: read the record again before sending it again."],
}
BODY = ["Invalid Content-Type header", "Server can not understand Content-Type HTTP header media type \"<type>\"", "UTF-8 is the only supported charset", "Decoding error.", "Expected a JSON body: <where decoding failed>", "Expected an XML body: <where decoding failed>", "The request data is invalid.", "Resource data pre-validation error."]
LIST = ["Resource collection paging error.", "The paging limit exceeds the allowed number.", "Resource collection ordering error.", "Resource collection filtering error."]
CONVERT = ["Invalid value \"<value>\" for attribute \"<field>\".", "Please enter a valid number in the \"<field>\" field.", "Invalid date in the \"<field>\" field.", "Invalid value for \"<field>\" in request.", "Missing \"<field>\" in request.", "Empty value for \"<field>\" in request.", "<field> is a required value."]
PRICES = ["Invalid \"website_id\" value in the \"<set>\" set.", "Invalid \"cust_group\" value in the \"<set>\" set", "The \"price\" value in the \"<set>\" set is a required field.", "Please enter a number 0 or greater in the \"price\" field in the \"<set>\" set.", "The \"price_qty\" value in the \"<set>\" set is a required field.", "Please enter a number greater than 0 in the \"price_qty\" field in the \"<set>\" set.", "Please enter a number 0 or greater in the \"<field>\" field."]
UPSTREAM400 = "A 400 from Magento is passed on with its message, parameters substituted (for example `The value of attribute \"sku\" must be unique.`)."

def err(status, msgs, extra=""):
    text = "; ".join(f"`{m}`" for m in msgs)
    d = {"description": (f"Messages: {text}." if msgs else "") + (" " + extra if extra else ""),
         "content": {"application/json": {"schema": ref("Error")}, "application/xml": {"schema": ref("Error")}}}
    if msgs:
        d["content"]["application/json"]["example"] = {"messages": {"error": [{"code": int(status), "message": msgs[0]}]}}
    if status == "429":
        d["headers"] = {"Retry-After": {"$ref": "#/components/headers/Retry-After"}, "RateLimit-Policy": {"$ref": "#/components/headers/RateLimit-Policy"},
                        "RateLimit": {"$ref": "#/components/headers/RateLimit"}, "X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}}
    return d

def responses(ok, extra_errors, has_body=False, is_list=False, methods_note=""):
    r = {}
    r.update(ok)
    errs = {k: list(v) for k, v in COMMON.items()}
    if has_body:
        errs["400"] += BODY
        errs["413"] = ["Request body is larger than the allowed size."]
    if is_list:
        errs["400"] += LIST
    for status, msgs in extra_errors.items():
        errs.setdefault(status, [])
        errs[status] += msgs
    errs["405"] = ["Resource method not implemented yet.", "Resource does not support method."]
    for status in sorted(errs):
        extra = ""
        if status == "403": extra = "The caller's user type may not use this operation (checked before any 405)."
        if status == "404": extra = "A customer reaching for another customer's record, address or order gets `Resource not found.` too: nothing about it leaks."
        if status == "405": extra = "A method this route does not have, for a caller who may use the resource: `Resource method not implemented yet.` (the resource never had it) or `Resource does not support method.` (it refuses it)."
        if status == "401": extra = "A credential that is present but malformed, forged, expired or revoked; never a silent downgrade to Guest. Carries `WWW-Authenticate: Bearer error=\"invalid_token\"`."
        if status == "503": extra = "Each names what failed: the back end is unavailable or the circuit is open (cached reads are served stale instead when they can be); too many requests are in flight; the OAuth sign-in store (the database) cannot be reached or does not answer in time; Redis cannot be reached (with several instances sharing it, a write that needs its shared lock); or another instance holds the record's lock past the wait (`temporarily unavailable`). A write refused this way had no effect. All with `Retry-After: 1` where a retry may succeed."
        if status == "429": extra = "Past a rate limit of the caller's (`STOREGATE_RATE_LIMITS`: per client and route class, docs/limits.md), with `Retry-After` (seconds), `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers); on `POST /api/rest/auth/token`, also past the failed sign-ins of a username or an address (`STOREGATE_SIGNIN_LIMIT`), without asking the store."
        if status == "409": extra = "Another writer changed the same customer while this write was saved and read back, again after a retry; read the record and try again."
        if status == "400" and has_body: extra = UPSTREAM400
        built = err(status, list(dict.fromkeys(errs[status])), extra)
        shared = SHARED.setdefault(status, built) if status in ("401", "403", "405", "406", "413", "429", "500", "502", "503", "504") else None
        if shared is not None and shared == built:
            r[status] = {"$ref": f"#/components/responses/Error{status}"}
        else:
            r[status] = built
    return r
SHARED = {}

def body_content(schema_name, default_json=True):
    s = ref(schema_name)
    c = {"application/json": {"schema": s}, "application/xml": {"schema": s}, "text/xml": {"schema": s}}
    return {"required": True, "content": c}

def users(u, note=""):
    return {"x-user-types": u, "security": ([{}] if "Guest" in u else []) + [{"bearer": []}], }

LIMITED = {"RateLimit": {"$ref": "#/components/headers/RateLimit"}}
def ok_doc(desc, schema=None, extra_headers=None):
    d = {"description": desc}
    h = {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}, **LIMITED}
    if extra_headers: h.update(extra_headers)
    d["headers"] = h
    if schema is not None:
        d["content"] = {"application/json": {"schema": schema}, "application/xml": {"schema": schema}}
    return {"200": d}

CACHED = {"ETag": {"$ref": "#/components/headers/ETag"}, "X-Cache": {"$ref": "#/components/headers/X-Cache"}, "Cache-Control": {"$ref": "#/components/headers/Cache-Control"}}
def by_view(prefix, kind):
    views = [x for x in ["Admin", "Customer", "Guest"] if f"{prefix}{x}{kind}" in schemas]
    if len(views) == 1:
        return ref(f"{prefix}{views[0]}{kind}")
    return {"anyOf": [ref(f"{prefix}{x}{kind}") for x in views],
            "description": "The view depends on the caller's user type: " + ", ".join(views) + "."}
def by_view_keyed(prefix, kind):
    return {"type": "object", "additionalProperties": by_view(prefix, kind), "description": "JSON: an object keyed by id, in the list's order. XML: one `<data_item>` per record."}
def by_view_arr(prefix, kind):
    return {"type": "array", "items": by_view(prefix, kind), "description": "JSON: an array. XML: one `<data_item>` per record."}

P = lambda name, desc, schema=None, where="path": {"name": name, "in": where, "required": where == "path", "description": desc, "schema": schema or {"type": "string"}}
ID = lambda name, what: P(name, what, {"type": "string", "pattern": "^[0-9]+$"})
LISTQ = [{"$ref": f"#/components/parameters/{n}"} for n in ("page", "limit", "order", "dir", "filter")]
CREATED = {"200": {"description": "Created: empty body, `Location: /api/rest/<resource>/<id>`.", "headers": {"Location": {"schema": {"type": "string"}}, "X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}, **LIMITED}}}
EMPTY = lambda what: {"200": {"description": f"{what}: empty body.", "headers": {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}, **LIMITED}}}
STORE = P("store_id", "a store view id", {"type": "string", "pattern": "^[0-9]+$"})

paths = {}
def op(path, method, summary, description, user_types, resp, params=None, body=None, tags=None, route=None):
    item = paths.setdefault(path, {})
    if route: item["x-storegate-route"] = route
    o = {"summary": summary, "description": description, "tags": tags or [], "operationId": (method + path).replace("/api/rest", "").replace("/", "_").replace("{", "").replace("}", "").replace("=", "_")}
    o.update(users(user_types))
    if params: o["parameters"] = params
    if body: o["requestBody"] = body
    o["responses"] = resp
    item[method] = o

A, C, G = "Admin", "Customer", "Guest"
NF = {"404": ["Resource not found."]}
RACE = {"409": ["The customer was changed by another writer at the same time. Read it and try again."]}
STORE_ERR = {"400": ["Requested store is invalid"]}

# stock items
op("/api/rest/stockitems", "get", "List stock items", "The reduced field set of SPEC 2.1. Live reads, never cached. DELETE is refused: 405.", [A],
   responses(ok_doc("Stock items", by_view_arr("StockItem", "ListItem")), {}, is_list=True), LISTQ, tags=["Stock items"])
op("/api/rest/stockitems", "put", "Update many stock items", "One `data_item` per item, each with `item_id`; at most 100 per request, run 8 at a time; one bad item never stops the others. Body default XML.", [A],
   {"207": {"description": "Per-item outcome.", "content": {"application/json": {"schema": ref("StockBatchResult")}, "application/xml": {"schema": ref("StockBatchResult")}}},
    **{k: v for k, v in responses({}, {"400": ["Invalid value for \"item_id\" in request.", "Resource data invalid.", "Resource updated successful.", "At most <n> stock items can be updated in one request."] + CONVERT}, has_body=True).items()}},
   body={"required": True, "content": {"application/xml": {"schema": {"type": "array", "items": ref("StockItemBatchItem")}}, "application/json": {"schema": {"type": "array", "items": ref("StockItemBatchItem")}}}}, tags=["Stock items"])
op("/api/rest/stockitems/{id}", "get", "Read a stock item", "`id` is the stock item id (not the product id).", [A],
   responses(ok_doc("The full stock item", ref("StockItemAdmin")), NF), [ID("id", "stock item id")], tags=["Stock items"])
op("/api/rest/stockitems/{id}", "put", "Update a stock item", "Only the fields to change. Body default XML.", [A],
   responses(EMPTY("Updated"), {**NF, "400": CONVERT + ["Invalid value for \"item_id\" in request."]}, has_body=True), [ID("id", "stock item id")], body_content("StockItemUpdate"), tags=["Stock items"])

# products
PROD_LISTQ = LISTQ + [P("category_id", "only the products of this category, by position", {"type": "string", "pattern": "^[0-9]+$"}, "query")]
op("/api/rest/products", "get", "List products", "Admin sees the Admin view; Customer and Guest the shoppers' view (enabled, visible products; prices from Magento's rendering, with tax). Cached (`ETag`, `X-Cache`). With `category_id`, the category's list (`order` does not apply). PUT and DELETE of the collection: 405 `Resource does not support method.`", [A, C, G],
   responses(ok_doc("Products", by_view_keyed("Product", "ListItem"), CACHED), {"400": ["Category not found.", "Requested store is invalid"]}, is_list=True), PROD_LISTQ, tags=["Products"])
op("/api/rest/products", "post", "Create a simple product", "Every required field of SPEC 2.2 is checked before any upstream call. An existing SKU is refused (Magento's create is an upsert). Body default JSON.", [A],
   responses(CREATED, {"400": CONVERT + PRICES + ["Missing \"type_id\" in request.", "Missing \"attribute_set_id\" in request.", "Invalid product type.", "Creation of products with type '<type>' is not implemented", "Invalid attribute set.", "SKU length should be 64 characters maximum.", "The value of attribute \"sku\" must be unique."]}, has_body=True), body=body_content("ProductCreate"), tags=["Products"])
op("/api/rest/products/{id}", "get", "Read a product", "The view of the caller's user type. Shoppers get 404 for disabled or invisible products. Cached (`ETag`, `If-None-Match` gives 304).", [A, C, G],
   {**responses(ok_doc("The product", by_view("Product", ""), CACHED), NF), "304": {"description": "Not modified (`If-None-Match` matched the `ETag`)."}}, [ID("id", "product id")], tags=["Products"])
op("/api/rest/products/{id}", "put", "Update a product", "Only the fields sent change; `type_id` and `attribute_set_id` are ignored; changing the SKU is refused. Body default JSON.", [A],
   responses(EMPTY("Updated"), {**NF, "400": CONVERT + PRICES + ["Changing the SKU of a product is not supported; create a new product instead.", "SKU length should be 64 characters maximum."]}, has_body=True), [ID("id", "product id")], body_content("ProductUpdate"), tags=["Products"])
op("/api/rest/products/{id}", "delete", "Delete a product", "Its stock item goes with it.", [A],
   responses(EMPTY("Deleted"), NF), [ID("id", "product id")], tags=["Products"])
op("/api/rest/products/category_id={category_id}", "get", "Products of a category (the spec's path)", "Ordered by position in the category; `page`, `limit` and `filter` apply, `order` does not. Every user type. Served by the same route as `/products/{id}`.", [A, C, G],
   responses(ok_doc("Products of the category, ordered by position", by_view_arr("Product", "CategoryItem"), CACHED), {"400": ["Category not found."]}, is_list=True), [ID("category_id", "category id")] + LISTQ, tags=["Products"], route="/api/rest/products/{id}")
op("/api/rest/products/category/{category_id}", "get", "Products of a category", "The original's other spelling of `/products/category_id={category_id}`.", [A, C, G],
   responses(ok_doc("Products of the category, ordered by position", by_view_arr("Product", "CategoryItem"), CACHED), {"400": ["Category not found."]}, is_list=True), [ID("category_id", "category id")] + LISTQ, tags=["Products"])

# images
IMG_ERR = {"400": ["Requested store is invalid", "The image is not specified", "The image content must be valid base64 encoded data", "The image content must be valid base64 encoded data.", "Unsupported image MIME type", "The image MIME type is not valid or not supported.", "The image content is not a valid <type> image.", "Requested product does not support images", "Resource unknown error."] + CONVERT, "404": ["Resource not found.", "Product image not found", "No image with the provided ID", "The image doesn't exist"]}
IMG_READ_ERR = {"400": ["Requested store is invalid"], "404": ["Resource not found.", "Product image not found"]}
for store in (False, True):
    sfx = "/store/{store_id}" if store else ""
    sp = [STORE] if store else []
    where = " as configured for the store view (labels can differ; `types` may be empty)" if store else ""
    op(f"/api/rest/products/{{id}}/images{sfx}", "get", "List a product's images" + (" for a store view" if store else ""), f"Image records{where}. Shoppers never see excluded images nor `exclude`. `url` is the store's media URL + `catalog/product` + file. Cached.", [A, C, G],
       responses(ok_doc("Images", by_view_arr("Image", "ListItem"), CACHED), IMG_READ_ERR), [ID("id", "product id")] + sp, tags=["Product images"])
    op(f"/api/rest/products/{{id}}/images{sfx}", "post", "Add an image" + (" (parameters for a store view)" if store else ""), "The image is added at global level" + ("; the parameters sent apply to the store view" if store else "") + ". Default names `image`, `image_2`, ... Body default XML; at most STOREGATE_IMAGE_BODY_LIMIT_BYTES.", [A],
       responses(CREATED, IMG_ERR, has_body=True), [ID("id", "product id")] + sp, body_content("ImageCreate"), tags=["Product images"])
    op(f"/api/rest/products/{{id}}/images/{{image_id}}{sfx}", "get", "Read an image" + (" for a store view" if store else ""), f"One image record{where}. Cached.", [A, C, G],
       responses(ok_doc("The image", by_view("Image", "ListItem" if False else ""), CACHED), IMG_READ_ERR), [ID("id", "product id"), ID("image_id", "image id")] + sp, tags=["Product images"])
    op(f"/api/rest/products/{{id}}/images/{{image_id}}{sfx}", "put", "Update an image" + (" for a store view" if store else ""), "Partial: omitted fields keep their value.", [A],
       responses(EMPTY("Updated"), IMG_ERR, has_body=True), [ID("id", "product id"), ID("image_id", "image id")] + sp, body_content("ImageUpdate"), tags=["Product images"])
    op(f"/api/rest/products/{{id}}/images/{{image_id}}{sfx}", "delete", "Delete an image" + (" for a store view" if store else ""), "Sets the image's parameters to No Image" + (" for the store view" if store else "") + ". Magento 2.4 deletes the file when no other product uses it.", [A],
       responses(EMPTY("Deleted"), IMG_READ_ERR), [ID("id", "product id"), ID("image_id", "image id")] + sp, tags=["Product images"])

# customers
op("/api/rest/customers", "get", "List customers", "Admin: every customer. Customer: a list holding only their own record. Never cached in a shared entry (`Cache-Control: private, no-store`).", [A, C],
   responses(ok_doc("Customers", by_view_arr("Customer", "ListItem")), {}, is_list=True), LISTQ, tags=["Customers"])
op("/api/rest/customers", "post", "Create a customer", "Body default XML.", [A],
   responses(CREATED, {"400": CONVERT + ["The password must have at least 7 characters. Leading or trailing spaces will be ignored.", "Invalid value for \"password\" in request.", "Invalid value \"<value>\" for attribute \"website_id\"."]}, has_body=True), body=body_content("CustomerCreate"), tags=["Customers"])
op("/api/rest/customers/{id}", "get", "Read a customer", "Admin: any customer. Customer: their own record only (another's is 404).", [A, C],
   responses(ok_doc("The customer", by_view("Customer", "")), NF), [ID("id", "customer id")], tags=["Customers"])
op("/api/rest/customers/{id}", "put", "Update a customer", "Only the fields to change; `website_id` and `created_in` cannot be updated. A customer: their own record only, fewer fields.", [A, C],
   responses(EMPTY("Updated"), {**NF, **RACE, "400": CONVERT + ["The password must have at least 7 characters. Leading or trailing spaces will be ignored."]}, has_body=True), [ID("id", "customer id")], {"required": True, "content": {t: {"schema": {"anyOf": [ref("CustomerUpdateAdmin"), ref("CustomerUpdateCustomer")]}} for t in ("application/json", "application/xml", "text/xml")}}, tags=["Customers"])
op("/api/rest/customers/{id}", "delete", "Delete a customer", "Revokes the customer's gateway tokens at once.", [A],
   responses(EMPTY("Deleted"), NF), [ID("id", "customer id")], tags=["Customers"])

ADDR_ERR = {**RACE, "400": ["Invalid country identifier type", "Country does not exist", "Country is required", "Country is not between '2' and '3' inclusively.", "Invalid State/Province type", "State/Province is required", "State/Province is invalid", "State/Province does not exist", "Invalid value for \"street\" in request."] + CONVERT, "404": ["Resource not found."]}
op("/api/rest/customers/{id}/addresses", "get", "List a customer's addresses", "A customer: their own only.", [A, C],
   responses(ok_doc("Addresses", by_view_arr("Address", "ListItem")), NF, is_list=True), [ID("id", "customer id")] + LISTQ, tags=["Addresses"])
op("/api/rest/customers/{id}/addresses", "post", "Add an address", "Validated against Magento's directory before any write. `is_default_billing`/`is_default_shipping` = 1 moves the default. A customer: for themselves only.", [A, C],
   responses(CREATED, ADDR_ERR, has_body=True), [ID("id", "customer id")], body_content("AddressCreate"), tags=["Addresses"])
op("/api/rest/customers/addresses/{id}", "get", "Read an address", "A customer: their own only.", [A, C],
   responses(ok_doc("The address", by_view("Address", "")), NF), [ID("id", "address id")], tags=["Addresses"])
op("/api/rest/customers/addresses/{id}", "put", "Update an address", "Address fields, including the street list and the default flags (0 changes nothing).", [A, C],
   responses(EMPTY("Updated"), ADDR_ERR, has_body=True), [ID("id", "address id")], body_content("AddressWrite"), tags=["Addresses"])
op("/api/rest/customers/addresses/{id}", "delete", "Delete an address", "A default billing or shipping address cannot be deleted.", [A, C],
   responses(EMPTY("Deleted"), {"400": ["Address is default for customer so is not allowed to be deleted"], **NF, **RACE}), [ID("id", "address id")], tags=["Addresses"])

# orders
op("/api/rest/orders", "get", "List orders", "Admin: every order. Customer: their own. Guest: an empty list. Amounts are 4-decimal strings, empty where Magento has none.", [A, C, G],
   responses(ok_doc("Orders", {"type": "object", "additionalProperties": by_view("Order", "ListItem"), "description": "JSON: an object keyed by order id. XML: one `<data_item_<order id>>` element per order."}), {}, is_list=True), LISTQ, tags=["Orders"])
op("/api/rest/orders/{id}", "get", "Read an order", "A customer: their own only (another's is 404).", [A, C],
   responses(ok_doc("The order", by_view("Order", "")), NF), [ID("id", "order id")], tags=["Orders"])

# the original's routes beyond the spec: a product's categories and websites, an order's parts
PCAT_ERR = {"404": ["Resource not found.", "Category not found"]}
op("/api/rest/products/{id}/categories", "get", "List a product's categories", "`[{\"category_id\": \"2\"}]`, ascending. Admin: every assignment; Customer and Guest: the active categories. The original's route. PUT and DELETE of the collection: 405.", [A, C, G],
   responses(ok_doc("Categories", arr("ProductCategoryLink")), NF), [ID("id", "product id")], tags=["Products"])
op("/api/rest/products/{id}/categories", "post", "Assign a product to a category", "Body default XML. `Location: /api/rest/products/{id}/categories/{category_id}`.", [A],
   responses(CREATED, {**PCAT_ERR, "400": ["category_id: Value is required and can't be empty", "category_id: Please use numbers only in \"category_id\" field.", "Product #<id> is already assigned to category #<category_id>", "Cannot assign product to tree root category."]}, has_body=True), [ID("id", "product id")], body_content("ProductCategoryAssign"), tags=["Products"])
op("/api/rest/products/{id}/categories/{category_id}", "delete", "Remove a product from a category", "GET of one assignment: 405.", [A],
   responses(EMPTY("Removed"), {**PCAT_ERR, "400": ["Product #<id> isn't assigned to category #<category_id>"]}), [ID("id", "product id"), ID("category_id", "category id")], tags=["Products"])
PWEB_ERR = {"404": ["Product #<id> not found.", "Website #<website_id> not found."]}
op("/api/rest/products/{id}/websites", "get", "List a product's websites", "`[{\"website_id\": \"1\"}]`, ascending. Admin only, as in the original.", [A],
   responses(ok_doc("Websites", arr("ProductWebsiteLink")), PWEB_ERR), [ID("id", "product id")], tags=["Products"])
op("/api/rest/products/{id}/websites", "post", "Assign a product to a website", "Body default XML. `Location: /api/rest/products/{id}/websites/{website_id}`.", [A],
   responses(CREATED, {**PWEB_ERR, "400": ["Invalid value for \"website_id\" in request.", "Website #<website_id> not found.", "Product #<id> is already assigned to website #<website_id>", "\"copy_to_stores\" is not supported by this gateway."]}, has_body=True), [ID("id", "product id")], body_content("ProductWebsiteAssign"), tags=["Products"])
op("/api/rest/products/{id}/websites/{website_id}", "delete", "Remove a product from a website", "GET and PUT of one assignment: 405 `Resource does not support method.`", [A],
   responses(EMPTY("Removed"), {**PWEB_ERR, "400": ["Product #<id> isn't assigned to website #<website_id>"]}), [ID("id", "product id"), ID("website_id", "website id")], tags=["Products"])
OWN_NF = {"404": ["Resource not found."]}
op("/api/rest/orders/{id}/items", "get", "List an order's lines", "Parent and child lines alike (`parent_item_id`). A customer: their own orders only (another's is 404). Guests: 403. Never cached.", [A, C],
   responses(ok_doc("Order lines", by_view_arr("OrderItem", "Own")), OWN_NF), [ID("id", "order id")], tags=["Orders"])
op("/api/rest/orders/{id}/addresses", "get", "List an order's addresses", "Billing, then shipping (a virtual order has none). A customer: their own orders only.", [A, C],
   responses(ok_doc("Order addresses", by_view_arr("OrderAddress", "Own")), OWN_NF), [ID("id", "order id")], tags=["Orders"])
op("/api/rest/orders/{id}/addresses/{address_type}", "get", "Read an order's billing or shipping address", "`address_type` is `billing` or `shipping`.", [A, C],
   responses(ok_doc("The address", by_view("OrderAddress", "Own")), OWN_NF), [ID("id", "order id"), P("address_type", "billing or shipping", {"enum": ["billing", "shipping"]})], tags=["Orders"])
op("/api/rest/orders/{id}/comments", "get", "List an order's comments", "The order's status history, oldest first. A customer: their own orders, and only the comments shown on the storefront.", [A, C],
   responses(ok_doc("Comments", by_view_arr("OrderComment", "Own")), OWN_NF), [ID("id", "order id")], tags=["Orders"])
op("/api/rest/orders/{id}/comments", "post", "Add a comment to an order", "Body default XML. `Location: /api/rest/orders/comments/{comment id}`.", [A],
   responses(CREATED, {**OWN_NF, "400": ["Invalid value for \"<field>\" in request."]}, has_body=True), [ID("id", "order id")], body_content("OrderCommentCreate"), tags=["Orders"])
op("/api/rest/orders/comments/{id}", "get", "Read one order comment", "Admin (a customer: 405, as in the original). Found among the 2,000 orders updated most recently.", [A],
   responses(ok_doc("The comment", ref("OrderCommentAdmin")), OWN_NF), [ID("id", "comment id")], tags=["Orders"])

# auth + purge
op("/api/rest/auth/token", "post", "Get a customer token", "Checks the credentials with Magento and answers a signed token; send it as `Authorization: Bearer <access_token>`. No credential needed. Failed sign-ins are counted per username and per address (`STOREGATE_SIGNIN_LIMIT`, 10 in 5 minutes by default): past the count, 429 without asking the store; a success clears the username's count.", [G, C, A],
   responses({"200": {"description": "The token", "content": {"application/json": {"schema": ref("CustomerToken")}, "application/xml": {"schema": ref("CustomerToken")}}}},
             {"401": ["Invalid login or password."], "429": ["Too many failed sign-ins. Try again in <n> seconds."], "400": ["Missing \"<name>\" in request.", "Empty value for \"<name>\" in request.", "Invalid value for \"<name>\" in request."]}, has_body=True), body=body_content("Credentials"), tags=["Authentication"])
op("/api/rest/cache/purge", "post", "Purge cached reads", "After changes made directly in Magento. Tags are the gateway's or Magento's (translated).", [A],
   responses({"200": {"description": "The tags purged", "content": {"application/json": {"schema": ref("PurgeResult")}, "application/xml": {"schema": ref("PurgeResult")}}}},
             {"400": ["Missing \"tags\" in request.", "Invalid \"all\": use true or false.", "Invalid \"tags\": use a list of cache tags or one comma-separated string.", "At most <n> tags may be purged at once."]}, has_body=True), body=body_content("PurgeRequest"), tags=["Operations"])

# the dual run's report (issue 31, docs/dual-run.md)
SHADOW_NF = {"404": ["Resource not found."]}
op("/api/rest/shadow/report", "get", "The dual run's report", "With a candidate back end (`STOREGATE_SHADOW_UPSTREAM_URL`): since when, the sample rate, and per route and user type the comparisons' outcomes (`compared`, `matched`, `differed`, `noise`, `lag`, `error`, `timeout`, `not_compared`, `skipped`, `pending`), the field paths that differed with their class (`value`, `missing`, `extra`, `type`, `order`, `status`), counts and one example, and a verdict (`ready`, `not ready`, `too few`). Customer, address and order values appear only as digests. With Redis, the fleet's counts. Without a candidate: 404. Never cached.", [A],
   responses(ok_doc("The report", ref("ShadowReport")), SHADOW_NF), tags=["Operations"])
op("/api/rest/shadow/report", "delete", "Start a new count", "Drops the dual run's counts (the fleet's, with Redis) and starts again now.", [A],
   responses(EMPTY("A new count begins"), SHADOW_NF), tags=["Operations"])
op("/api/rest/shadow", "get", "The dual run's report as a page", "An HTML page for a person: the admin key is typed on the page and sent by its script in a header, never in the URL. Served to an admin, and to a browser without a key (the page holds no data); any other caller that is not an admin: 401 or 403. Without a candidate: 404.", [A],
   {**ok_doc("An HTML page"), **responses({}, SHADOW_NF)}, tags=["Operations"])
paths["/api/rest/shadow"]["get"]["responses"]["200"]["content"] = {"text/html": {"schema": {"type": "string"}}}

# operational
def plain(path, summary, desc, content, tag="Operations", params=None):
    o = {"summary": summary, "description": desc, "tags": [tag], "security": [{}], "x-user-types": ["anyone"], "operationId": path.replace("/", "_").replace(".", "_").replace("{", "").replace("}", "").replace("*", "")}
    if params: o["parameters"] = params
    o["responses"] = {"200": {"description": summary, "content": content}}
    paths[path] = {"get": o}
plain("/healthz", "Liveness", "`ok` while the process runs.", {"text/plain": {"schema": {"const": "ok\n"}}})
plain("/readyz", "Readiness", "Ready while the gateway can serve: a Magento outage does not take replicas out of service (cached reads keep being served). The upstream's state is reported beside it and in `storegate_upstream_up`. `?upstream=required`: 503 while Magento does not answer.", {"application/json": {"schema": ref("Readiness")}}, params=[P("upstream", "`required`: not ready while the upstream is down", {"enum": ["required"]}, "query")])
paths["/readyz"]["get"]["responses"]["503"] = {"description": "While the start's warm-up runs (`status` warming, at most STOREGATE_WARM_START's seconds); with `?upstream=required`, while Magento does not answer; while Magento refuses the gateway's credentials.", "content": {"application/json": {"schema": ref("Readiness")}}}
plain("/metrics", "Prometheus metrics", "OpenMetrics text; every series starts with `storegate_`.", {"application/openmetrics-text": {"schema": {"type": "string"}}})
plain("/api/rest/openapi.json", "This document", "The OpenAPI 3.1 document of the served surface.", {"application/json": {"schema": {"type": "object"}}}, tag="Reference")
plain("/api/rest/docs", "This document as a page", "A self-contained HTML page rendering this document.", {"text/html": {"schema": {"type": "string"}}}, tag="Reference")
plain("/media/{path}", "Sandbox media", "Sandbox mode only: the embedded sandbox's product images (`/media/catalog/product/...`), so `image_url` and image `url`s work through `STOREGATE_PUBLIC_URL` from a device. Absent against a real Magento.", {"image/*": {"schema": {"type": "string", "contentEncoding": "binary"}}}, tag="Reference",
      params=[P("path", "the file's path under /media/", {"type": "string"})])
paths["/media/{path}"]["x-storegate-route"] = "/media/{*path}"
paths["/media/{path}"]["get"]["responses"]["404"] = {"description": "No such file."}

import importlib.util as _u
_spec = _u.spec_from_file_location("other_branches", os.path.join(HERE, "other_branches.py"))
_extras = _u.module_from_spec(_spec); _spec.loader.exec_module(_extras)
_extras.apply(root, globals())

# Examples: real answers of the gateway in front of the sandbox (Guest).
def example(path, method, status, json_file, xml_file=None, summary="Guest, the sandbox's product 1"):
    content = paths[path][method]["responses"][status]["content"]
    content["application/json"]["examples"] = {"guest": {"summary": summary, "value": json.load(open(json_file))}}
    if xml_file:
        content["application/xml"]["examples"] = {"guest": {"summary": summary, "value": open(xml_file).read()}}
EX = os.path.join(HERE, "examples")
example("/api/rest/products/{id}", "get", "200", os.path.join(EX, "product-1-guest.json"), os.path.join(EX, "product-1-guest.xml"))
example("/api/rest/products/{id}/images", "get", "200", os.path.join(EX, "images-1-guest.json"), summary="Guest, the sandbox's product 1")
paths["/api/rest/auth/token"]["post"]["responses"]["200"]["content"]["application/json"]["example"] = {"access_token": "sg1.MS4xNzk1NTIzNTgwOTcwLjE3OTU1MjcxODAuN2FVTWYwOEJyVWZDT1c1NA.KP1zJme50kbeACue737iq6D6PQTu9s6aVqE602XQUoc", "token_type": "Bearer", "expires_in": 3600, "customer_id": 1}
paths["/api/rest/auth/token"]["post"]["requestBody"]["content"]["application/json"]["example"] = {"username": "roni_cost@example.com", "password": "Roni-Cost-2024"}

info_desc = open(os.path.join(HERE, "info.md")).read() + globals().get("info_extra", "")
doc = {
 "openapi": "3.1.0",
 "info": {"title": "storegate: the legacy Magento-1-style REST API on Magento 2", "version": "1", "license": {"name": "MIT", "identifier": "MIT"}, "description": info_desc},
 "servers": [{"url": "/", "description": "The gateway itself; the API's base URL is `/api/rest`."}],
 "tags": [{"name": n} for n in ["Products", "Product images", "Stock items", "Customers", "Addresses", "Orders", "Authentication", "OAuth 1.0a", "Operations", "Reference"]],
 "paths": paths,
 "components": {
   "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "Admin: `Bearer <admin key>`. Customer: `Bearer <access_token>` from `POST /api/rest/auth/token`. Guest: no `Authorization` header."}},
   "parameters": {
     "page": {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1, "default": 1}, "description": "1-based; a page past the end is empty. Bad values: 400 `Resource collection paging error.`"},
     "limit": {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}, "description": "1 to 100. Above: 400 `The paging limit exceeds the allowed number.`"},
     "order": {"name": "order", "in": "query", "schema": {"type": "string"}, "description": "a field of the caller's view that Magento can sort on; else 400 `Resource collection ordering error.`"},
     "dir": {"name": "dir", "in": "query", "schema": {"type": "string", "default": "asc"}, "description": "`asc`; anything else is descending"},
     "filter": {"name": "filter", "in": "query", "style": "deepObject", "explode": True, "schema": {"type": "object"}, "description": "`filter[n][attribute]=<field>&filter[n][<op>]=<value>`, op one of eq, neq, like, nlike, gt, lt, gteq (moreq), lteq, finset, null, notnull, from, to, in, nin (`filter[n][in]=a,b` or `filter[n][in][0]=a`). At most 20 filters, 300 values. The field must be one of the caller's view that Magento can search; else 400 `Resource collection filtering error.`"},
   },
   "headers": {
     "X-Request-Id": {"schema": {"type": "string"}, "description": "the caller's, when 1-128 characters of letters, digits and -_.:, else a new one; also sent to Magento"},
     "ETag": {"schema": {"type": "string"}, "description": "strong validator of a cached read; `If-None-Match` gives 304"},
     "X-Cache": {"schema": {"enum": ["HIT", "MISS", "STALE"]}, "description": "how the cache answered; STALE also carries `Warning: 110` or `111`"},
     "Cache-Control": {"schema": {"type": "string"}, "description": "`public` for the Guest view, `private` otherwise; `private, no-store` for customer data"},
     "Retry-After": {"schema": {"type": "integer", "minimum": 1}, "description": "seconds until the request may succeed"},
     "RateLimit-Policy": {"schema": {"type": "string"}, "example": "\"guest-catalog\";q=300;w=60;pk=:ZpECyb+zhYWtKYXw:",
                          "description": "draft-ietf-httpapi-ratelimit-headers, on a 429: the limit that refused the request (`STOREGATE_RATE_LIMITS`): its name (`<client>-<class>`: guest, customer, consumer or admin; catalog, account or writes), `q` requests in any window of `w` seconds, and `pk`, the client's partition key: a keyed digest, never an address, key or token."},
     "RateLimit": {"schema": {"type": "string"}, "example": "\"guest-catalog\";r=297;t=60;pk=:ZpECyb+zhYWtKYXw:",
                   "description": "draft-ietf-httpapi-ratelimit-headers: on every answer a limit counts (cache hits included), the policy's name and `pk` as in `RateLimit-Policy`, `r` requests left and `t` seconds until the window is whole again (on a 429, until the next request may pass). A signed customer call carries two (its app's and the customer's). For a busy client `r` leaves out what this instance's worker holds for it, less than a hundredth of the limit."},
   },
   "schemas": schemas,
   "responses": {f"Error{k}": v for k, v in sorted(SHARED.items())},
 },
}
text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
target = os.path.join(root, "docs", "openapi.json")
if CHECK:
    current = open(target).read() if os.path.exists(target) else ""
    if current != text:
        sys.exit("docs/openapi.json is not what tools/openapi/generate.py writes: run it")
    print("docs/openapi.json is up to date")
else:
    open(target, "w").write(text)
    print(len(paths), "paths", len(schemas), "schemas")
