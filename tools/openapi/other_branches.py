"""Operations of routes that other branches were adding while this document was written (the
original's store-view reads, OAuth 1.0a): each is applied only when the tree serves the route,
so the document follows the router through the merges. Once merged, they may move into
generate.py."""
import os, re

def tree_has(root, needle, *files):
    for f in files:
        p = os.path.join(root, f)
        if os.path.exists(p) and needle in open(p).read():
            return True
    return False

def add_store_routes(root, g):
    op, responses, ok_doc, by_view_keyed, by_view_arr, by_view, ID, LISTQ, CACHED, NF, P = (g[k] for k in
        ["op", "responses", "ok_doc", "by_view_keyed", "by_view_arr", "by_view", "ID", "LISTQ", "CACHED", "NF", "P"])
    EMPTY, CONVERT, PRICES, body_content = (g[k] for k in ["EMPTY", "CONVERT", "PRICES", "body_content"])
    if not tree_has(root, '"/products/store/{store}"', "src/resources/mod.rs"):
        return
    A, C, G = "Admin", "Customer", "Guest"
    STORE = P("store", "a store view, by id or code", {"type": "string"})
    SE = {"400": ["Requested store is invalid"]}
    op("/api/rest/products/store/{store}", "get", "List products in a store view", "The product list with the store view's values (names, descriptions, prices of its website). A store view's values are written with `PUT /products/{id}/store/{store}`.", [A, C, G],
       responses(ok_doc("Products", by_view_keyed("Product", "ListItem"), CACHED), SE, is_list=True), [STORE] + LISTQ, tags=["Products"])
    op("/api/rest/products/{id}/store/{store}", "get", "Read a product in a store view", "One product with the store view's values.", [A, C, G],
       responses(ok_doc("The product", by_view("Product", ""), CACHED), {**SE, **NF}), [ID("id", "product id"), STORE], tags=["Products"])
    if tree_has(root, "Method::PUT", "src/resources/product_store.rs"):
        op("/api/rest/products/{id}/store/{store}", "put", "Update a product in a store view", "The original's store-view update: only the fields sent change, and only in that store view (its name, descriptions, status...; fields Magento keeps per website or globally are written there); store 0 is the admin values. Body default JSON. Otherwise as `PUT /products/{id}`.", [A],
           responses(EMPTY("Updated"), {**SE, **NF, "400": CONVERT + PRICES + ["Changing the SKU of a product is not supported; create a new product instead.", "Requested store is invalid"]}, has_body=True), [ID("id", "product id"), STORE], body_content("ProductUpdate"), tags=["Products"])
    for path in ("/api/rest/products/category/{category_id}/store/{store}", "/api/rest/products/store/{store}/category/{category_id}"):
        op(path, "get", "Products of a category in a store view", "Ordered by position in the category, with the store view's values; both spellings of the original.", [A, C, G],
           responses(ok_doc("Products of the category", by_view_arr("Product", "CategoryItem"), CACHED), {"400": ["Category not found.", "Requested store is invalid"]}, is_list=True), [ID("category_id", "category id"), STORE] + LISTQ, tags=["Products"])

def add_oauth(root, g):
    paths, ref = g["paths"], g["ref"]
    if not tree_has(root, '"/oauth/initiate"', "src/resources/oauth/endpoints.rs"):
        return
    form = {"application/x-www-form-urlencoded": {"schema": {"type": "string"}}}
    problem = {"description": "The original's OAuth problem: `oauth_problem=<problem>` (for example `signature_invalid`, `nonce_used`, `timestamp_refused`, `consumer_key_rejected`, `token_rejected`, `parameter_absent&oauth_parameters_absent=<name>`), form-encoded, with `WWW-Authenticate: OAuth realm=\"storegate\"` on 401.", "content": form}
    def plain(path, methods, summary, desc, ok, errors=None):
        item = paths.setdefault(path, {})
        for m in methods:
            o = {"summary": summary, "description": desc + " Other methods: 405 with `Allow: GET, POST`.", "tags": ["OAuth 1.0a"], "security": [{}], "x-user-types": ["anyone"],
                 "operationId": (m + path).replace("/", "_")}
            o["responses"] = {"200": ok, **(errors or {})}
            item[m] = o
    plain("/oauth/initiate", ["post", "get"], "OAuth: a request token", "Signed with the consumer's key and secret (HMAC-SHA1 or PLAINTEXT, in the `Authorization: OAuth` header, the form or the query), with `oauth_callback`: `oob`, or a URL the consumer accepts (under its registered callback, of any scheme, e.g. `myapp://cb/done`; without one, any http(s) URL); any other is `400 oauth_problem=parameter_rejected`. Signatures over byte-ordered (RFC 5849) or natural-ordered (Magento 1.9) parameters are accepted.",
          {"description": "`oauth_token=...&oauth_token_secret=...&oauth_callback_confirmed=true`", "content": form}, {"400": problem, "401": problem})
    plain("/oauth/token", ["post", "get"], "OAuth: an access token", "Signed with the consumer's and the authorized request token's secrets, with `oauth_verifier`.",
          {"description": "`oauth_token=...&oauth_token_secret=...`", "content": form}, {"400": problem, "401": problem})
    html = {"text/html": {"schema": {"type": "string"}}}
    msgs = ("Messages a page can show: `Invalid login or password.`, `Invalid admin key.`, `Please sign in first.`, `Invalid form key. Please refresh the page.`, "
            "`The form sent is too large.` (`Request too large`), `This sign-in link is invalid or has expired. Go back to the application and start again.` (`Link expired`), "
            "`The store cannot handle sign-ins right now. Try again in a moment.` / `The store cannot check your sign-in right now. Try again in a moment.` (`Try again later`), "
            "`You did not give the application access. You can close this window.` (`Access rejected`). "
            "Past the failed sign-ins of a username or an address (`STOREGATE_SIGNIN_LIMIT`): 429 with `Retry-After`, the form and `Too many failed sign-ins. Try again in <n> seconds.`, without asking the store.")
    for base, who in (("/oauth/authorize", "a customer (their e-mail and password, checked with Magento)"), ("/admin/oauth_authorize", "the store's operator (the admin key)")):
        too_many = {"429": {"description": "Too many failed sign-ins: the form, saying when to try again (`Too many failed sign-ins. Try again in <n> seconds.`); the store is not asked.", "headers": {"Retry-After": {"$ref": "#/components/headers/Retry-After"}}, "content": html}}
        plain(base, ["get", "post"], "OAuth: the sign-in page", f"The page where {who} signs in to authorize `oauth_token`. " + msgs, {"description": "An HTML page.", "content": html}, too_many)
        plain(base + "/simple", ["get", "post"], "OAuth: the sign-in page, simple", "The same page without the store's decoration (for pop-ups and web views). " + msgs, {"description": "An HTML page.", "content": html}, too_many)
        plain(base + "/confirm", ["get", "post"], "OAuth: authorize", "Grants the request token; redirects to the callback with `oauth_token` and `oauth_verifier`, or shows the verifier for `oob`.", {"description": "An HTML page (or a 302 to the callback).", "content": html})
        plain(base + "/reject", ["get", "post"], "OAuth: refuse", "Refuses the request token; redirects to the consumer's rejected callback, or else to the app's own, with `oauth_token` and `rejected=1`; for `oob`, shows that access was refused.", {"description": "An HTML page (or a 302 to the callback).", "content": html})
    admin = paths["/admin/oauth_authorize"]["get"]
    admin["description"] += (" The path is matched without regard to case, as the original's was (its docs spell it `/admin/oAuth_authorize`), and so are `/simple`, `/confirm` and `/reject`."
                             " A browser (`Accept` naming `text/html`) on any other `/admin/...` URL gets an HTML 404 page (`Page not found`: `There is no page at this address."
                             " The sign-in page for operators is /admin/oauth_authorize, reached from the application that asked for access.`); other clients the API's 404.")
    if tree_has(root, '"/oauth/tokens"', "src/resources/mod.rs"):
        op, responses, ok_doc, ID, P = (g[k] for k in ["op", "responses", "ok_doc", "ID", "P"])
        g["schemas"]["OAuthToken"] = {"type": "object", "additionalProperties": False, "properties": {
            "id": {"type": "integer"}, "consumer_key": {"type": "string"}, "consumer_name": {"type": ["string", "null"]},
            "user_type": {"enum": ["admin", "customer"]}, "customer_id": {"type": ["integer", "null"]}, "revoked": {"type": "boolean"}, "created_at": {"type": "string"}}}
        q = [P("customer_id", "only this customer's tokens", {"type": "string"}, "query"), P("page", "from 1", {"type": "integer"}, "query"), P("limit", "1 to 1000, default 100", {"type": "integer"}, "query")]
        op("/api/rest/oauth/tokens", "get", "List OAuth access tokens", "Oldest first; never a token or a secret: the id is what an operator acts on.", ["Admin"],
           responses(ok_doc("Tokens", {"type": "array", "items": ref("OAuthToken")}), {"400": ["Invalid value for \"<name>\" in request."]}), q, tags=["OAuth 1.0a"])
        op("/api/rest/oauth/tokens/{id}", "delete", "Revoke an OAuth access token", "Later calls with it get `oauth_problem=token_rejected`.", ["Admin"],
           responses(g["EMPTY"]("Revoked"), g["NF"]), [ID("id", "token id")], tags=["OAuth 1.0a"])

def add_original_profile(root, g):
    if not os.path.exists(os.path.join(root, "src", "context", "profile.rs")):
        return
    g["info_extra"] = g.get("info_extra", "") + """

## With `STOREGATE_PROFILE=original`
Where the original answered differently from SPEC.md and clients may rely on it, the `original` profile answers as it did. Messages that differ: a missing image is `Resource not found.`; an unsupported image type `Unsuppoted image MIME type` (the original's spelling); a customer create's missing field names the attribute's label (`"First Name" is a required value.`, with `First Name`, `Last Name`, `Email`, `Password`, `Associate to Website`); an unknown country `Invalid value "<v>" for country_id`; an existing SKU `Invalid attribute "sku": The value of attribute "SKU" must be unique`; a body without `Content-Type` `Content-Type header is empty`; a `text/plain` body that is not a query string `Invalid data type. Check Content-Type.`; an unknown item of the stock batch `StockItem #<id> not found.` (code 400)."""

def apply(root, g):
    add_store_routes(root, g)
    add_oauth(root, g)
    add_original_profile(root, g)
