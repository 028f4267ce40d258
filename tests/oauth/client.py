#!/usr/bin/env python3
"""An app of the original API, written the way such apps are: requests-oauthlib.

Driven by tests/oauth_clients.rs against a running gateway. Modes:

  dance  --user customer|admin  : initiate, sign in on the authorize page (fetch it, take
                                  the form_key, post login[username]/login[password], press
                                  Authorize), follow the callback, exchange for an access
                                  token; prints {"token", "secret"} as JSON. With --other
                                  URL the authorize pages are another gateway's (a fleet
                                  behind a load balancer).
  calls  --token T --secret S   : signed reads and writes (in the header and in the query
                                  string), then the refusals: a forged
                                  signature, a replayed nonce and an expired timestamp must
                                  each be refused with the original's oauth_problem.
  rejected --token T --secret S : a signed read must be refused with token_rejected.

Any unexpected answer exits non-zero with a line saying what was wrong.
"""

import argparse
import json
import re
import sys
import time
import uuid
from urllib.parse import parse_qs, urlparse

import requests
from oauthlib.oauth1 import Client
from requests_oauthlib import OAuth1, OAuth1Session

CALLBACK = "http://127.0.0.1:9/app/callback"


def fail(message):
    print(f"client.py: {message}", file=sys.stderr)
    sys.exit(1)


def expect(response, status, what):
    if response.status_code != status:
        fail(f"{what}: expected {status}, got {response.status_code}: {response.text[:300]}")
    return response


def form_key(html, what):
    match = re.search(r'name="form_key" value="([0-9a-f]+)"', html)
    if not match:
        fail(f"{what}: no form_key on the page")
    return match.group(1)


def dance(args):
    session = OAuth1Session(args.key, client_secret=args.secret, callback_uri=CALLBACK)
    fetched = session.fetch_request_token(f"{args.base}/oauth/initiate")
    if fetched.get("oauth_callback_confirmed") != "true":
        fail(f"initiate: no oauth_callback_confirmed in {fetched}")
    request_token = fetched["oauth_token"]

    # The user's browser: a plain session with cookies, no JavaScript.
    browser = requests.Session()
    pages = args.other or args.base
    if args.user == "customer":
        page_url = f"{pages}/oauth/authorize"
        login = {"login[username]": args.email, "login[password]": args.password}
        confirm_url = f"{pages}/oauth/authorize/confirm"
    else:
        page_url = f"{pages}/admin/oauth_authorize"
        login = {"login[username]": "operator", "login[password]": args.admin_key}
        confirm_url = f"{pages}/admin/oauth_authorize/confirm"
    page = expect(browser.get(page_url, params={"oauth_token": request_token}), 200, "authorize page")
    if 'name="login[password]"' not in page.text:
        fail("authorize page: no login[password] field")
    key = form_key(page.text, "authorize page")

    # Without the form key the sign-in is refused (CSRF).
    expect(
        browser.post(page_url, data={"oauth_token": request_token, **login}),
        403,
        "sign-in without form_key",
    )
    wrong = dict(login)
    wrong["login[password]"] = "not-the-password"
    expect(
        browser.post(page_url, data={"oauth_token": request_token, "form_key": key, **wrong}),
        401,
        "sign-in with a wrong password",
    )
    confirm = expect(
        browser.post(page_url, data={"oauth_token": request_token, "form_key": key, **login}),
        200,
        "sign-in",
    )
    if "Authorize" not in confirm.text:
        fail("sign-in: no Authorize button")
    key = form_key(confirm.text, "confirm page")
    redirected = expect(
        browser.post(
            confirm_url,
            data={"oauth_token": request_token, "form_key": key},
            allow_redirects=False,
        ),
        302,
        "authorize",
    )
    location = redirected.headers["Location"]
    if not location.startswith(CALLBACK + "?"):
        fail(f"authorize: redirected to {location}")
    session.parse_authorization_response(location)
    verifier = parse_qs(urlparse(location).query)["oauth_verifier"][0]

    # A wrong verifier is refused and does not use the request token up.
    bad = OAuth1Session(
        args.key,
        client_secret=args.secret,
        resource_owner_key=request_token,
        resource_owner_secret=fetched["oauth_token_secret"],
        verifier="0" * 32,
    )
    refused = bad.post(f"{args.base}/oauth/token")
    expect(refused, 401, "token with a wrong verifier")
    if refused.text != "oauth_problem=token_rejected":
        fail(f"wrong verifier: {refused.text}")

    access = session.fetch_access_token(f"{args.base}/oauth/token", verifier=verifier)
    print(json.dumps({"token": access["oauth_token"], "secret": access["oauth_token_secret"]}))


def api(args, secret=None, token_secret=None, **client_options):
    return OAuth1(
        args.key,
        client_secret=secret or args.secret,
        resource_owner_key=args.token,
        resource_owner_secret=token_secret or args.token_secret,
        **client_options,
    )


JSON = {"Accept": "application/json"}


def put_json(url, args, body):
    """A signed PUT of a JSON body (the body itself is not signed), asking for JSON."""
    return requests.put(
        url,
        auth=api(args),
        headers={**JSON, "Content-Type": "application/json"},
        data=json.dumps(body),
    )


def problem(response, status, name, what):
    expect(response, status, what)
    body = response.json()
    message = body["messages"]["error"][0]["message"]
    if message != f"oauth_problem={name}":
        fail(f"{what}: expected oauth_problem={name}, got {message}")


def calls(args):
    rest = f"{args.base}/api/rest"
    auth = api(args)
    if args.user == "customer":
        me = expect(requests.get(f"{rest}/customers/{args.customer_id}", auth=auth, headers=JSON), 200, "own record")
        if me.json().get("email") != args.email:
            fail(f"own record: {me.text[:200]}")
        # Another customer's record stays hidden; admin-only resources are refused.
        expect(requests.get(f"{rest}/stockitems", auth=api(args), headers=JSON), 403, "stock items as a customer")
        # A write (JSON body, not signed) and a read of it.
        expect(put_json(f"{rest}/customers/{args.customer_id}", args, {"firstname": "Signed"}), 200, "update own record")
        again = expect(requests.get(f"{rest}/customers/{args.customer_id}", auth=api(args), headers=JSON), 200, "read back")
        if again.json().get("firstname") != "Signed":
            fail(f"write not seen: {again.text[:200]}")
    else:
        expect(requests.get(f"{rest}/stockitems", auth=auth, headers=JSON), 200, "stock items as admin")
        customers = expect(requests.get(f"{rest}/customers", auth=api(args), headers=JSON), 200, "customers as admin")
        if not customers.json():
            fail("customers as admin: empty")
        # A write: a product's name, then read back (query parameters are signed too).
        expect(put_json(f"{rest}/products/1", args, {"name": "Signed by requests-oauthlib"}), 200, "update a product")
        product = expect(
            requests.get(f"{rest}/products/1", params={"x": "a b+c"}, auth=api(args), headers=JSON),
            200,
            "read back",
        )
        if product.json().get("name") != "Signed by requests-oauthlib":
            fail(f"write not seen: {product.text[:200]}")

    # Brackets in filter keys, which clients of the original had to sign with care.
    listed = expect(
        requests.get(
            f"{rest}/products",
            params={"filter[1][attribute]": "name", "filter[1][like]": "%Bag%", "limit": "2"},
            auth=api(args),
            headers=JSON,
        ),
        200,
        "filtered list",
    )
    if not listed.json():
        fail("filtered list: empty")

    # Signed in the query string (RFC 5849 3.5.3, as rauth signs GETs): served as the signer,
    # not as Guest (the original's Guest answer: 403 here, or an empty order list).
    query = api(args, signature_type="query")
    if args.user == "customer":
        mine = expect(
            requests.get(f"{rest}/customers/{args.customer_id}", auth=query, headers=JSON),
            200,
            "own record, signed in the query",
        )
        if mine.json().get("email") != args.email:
            fail(f"query-signed own record: {mine.text[:200]}")
    else:
        expect(
            requests.get(f"{rest}/stockitems", params={"limit": "1"}, auth=query, headers=JSON),
            200,
            "stock items, signed in the query",
        )
    problem(
        requests.get(f"{rest}/products", auth=api(args, secret="f" * 32, signature_type="query"), headers=JSON),
        401,
        "signature_invalid",
        "forged signature in the query",
    )

    # HMAC-SHA256 and PLAINTEXT are accepted too.
    expect(
        requests.get(f"{rest}/products", auth=api(args, signature_method="HMAC-SHA256"), headers=JSON),
        200,
        "HMAC-SHA256",
    )
    expect(
        requests.get(f"{rest}/products", auth=api(args, signature_method="PLAINTEXT"), headers=JSON),
        200,
        "PLAINTEXT",
    )

    # Refusals. A forged signature (wrong consumer secret):
    problem(
        requests.get(f"{rest}/products", auth=api(args, secret="f" * 32), headers=JSON),
        401,
        "signature_invalid",
        "forged signature",
    )
    # A replay: the very same signed request twice.
    signed = requests.Request("GET", f"{rest}/products", auth=api(args), headers=JSON).prepare()
    with requests.Session() as http:
        expect(http.send(signed), 200, "first send")
        problem(http.send(signed), 401, "nonce_used", "replayed request")
    # A timestamp three hours old: outside the window, however fresh the nonce.
    client = Client(
        args.key,
        client_secret=args.secret,
        resource_owner_key=args.token,
        resource_owner_secret=args.token_secret,
        timestamp=str(int(time.time()) - 3 * 3600),
    )
    uri, headers, _ = client.sign(f"{rest}/products", http_method="GET")
    problem(requests.get(uri, headers={**headers, **JSON}), 401, "timestamp_refused", "expired timestamp")
    # RSA-SHA1 is a clean refusal, not a 500.
    rsa = ", ".join(
        f'{k}="{v}"'
        for k, v in [
            ("oauth_consumer_key", args.key),
            ("oauth_token", args.token),
            ("oauth_signature_method", "RSA-SHA1"),
            ("oauth_timestamp", str(int(time.time()))),
            ("oauth_nonce", uuid.uuid4().hex),
            ("oauth_version", "1.0"),
            ("oauth_signature", "c2lnbmF0dXJl"),
        ]
    )
    uri, headers = f"{rest}/products", {"Authorization": f"OAuth {rsa}"}
    problem(requests.get(uri, headers={**headers, **JSON}), 401, "signature_method_rejected", "RSA-SHA1")
    print("ok")


def rejected(args):
    problem(
        requests.get(f"{args.base}/api/rest/products", auth=api(args), headers=JSON),
        401,
        "token_rejected",
        "revoked token",
    )
    print("ok")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["dance", "calls", "rejected"])
    parser.add_argument("--base", required=True)
    parser.add_argument("--other")
    parser.add_argument("--key", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--user", choices=["customer", "admin"], default="customer")
    parser.add_argument("--email")
    parser.add_argument("--password")
    parser.add_argument("--admin-key")
    parser.add_argument("--customer-id")
    parser.add_argument("--token")
    parser.add_argument("--token-secret")
    args = parser.parse_args()
    {"dance": dance, "calls": calls, "rejected": rejected}[args.mode](args)


if __name__ == "__main__":
    main()
