<?php
// An app of the original API, written the way the original's documentation showed: PHP's
// pecl OAuth extension. Driven by tests/oauth_clients.rs against a running gateway.
//
//   php client.php dance    BASE KEY SECRET customer EMAIL PASSWORD
//   php client.php dance    BASE KEY SECRET admin ADMIN_KEY
//   php client.php calls    BASE KEY SECRET customer|admin TOKEN TOKEN_SECRET [CUSTOMER_ID]
//   php client.php rejected BASE KEY SECRET TOKEN TOKEN_SECRET
//   php client.php official BASE KEY SECRET TOKEN TOKEN_SECRET RESOURCE [ACCEPT]
//   php client.php natural  BASE KEY SECRET TOKEN TOKEN_SECRET
//
// dance takes the admin page's path as a last argument (the Magento 1 docs spell it
// /admin/oAuth_authorize). official makes the API call of the official Magento 1 REST
// examples as they wrote it (the customer example sends no Accept header, so pecl oauth
// sends `*/*` over libcurl and none over PHP streams; the admin example names `*/*`), and
// prints what they print, print_r of json_decode, then the answer's content type.
//
// natural signs as an app built for Magento 1.9 did, with Zend Framework 1's signer: the
// encoded parameter names sorted with strnatcmp (uksort), not by byte value; it checks that
// the two orders differ for its filter[2]/filter[10] names, that the call is served as the
// signer, that its replay and a forged or stale copy are refused, and that pecl oauth's
// byte-ordered signature of the same URL is served too.
//
// dance prints {"token","secret"}; the others print "ok". Anything unexpected exits 1.

const CALLBACK = 'http://127.0.0.1:9/app/callback';

function fail(string $message): void
{
    fwrite(STDERR, "client.php: $message\n");
    exit(1);
}

/** A browser without JavaScript: PHP streams, cookies kept by hand, no redirects followed. */
final class Browser
{
    private array $cookies = [];
    public int $status = 0;
    public array $headers = [];

    public function request(string $method, string $url, array $form = []): string
    {
        $headers = [];
        if ($this->cookies) {
            $pairs = [];
            foreach ($this->cookies as $name => $value) {
                $pairs[] = "$name=$value";
            }
            $headers[] = 'Cookie: ' . implode('; ', $pairs);
        }
        $options = ['method' => $method, 'ignore_errors' => true, 'follow_location' => 0];
        if ($method === 'POST') {
            $headers[] = 'Content-Type: application/x-www-form-urlencoded';
            $options['content'] = http_build_query($form);
        }
        $options['header'] = implode("\r\n", $headers);
        $body = file_get_contents($url, false, stream_context_create(['http' => $options]));
        $this->headers = $http_response_header ?? [];
        preg_match('#^HTTP/\S+ (\d+)#', $this->headers[0] ?? '', $m);
        $this->status = (int) ($m[1] ?? 0);
        foreach ($this->headers as $line) {
            if (preg_match('/^Set-Cookie:\s*([^=]+)=([^;]*)/i', $line, $c)) {
                $this->cookies[$c[1]] = $c[2];
            }
        }
        return $body === false ? '' : $body;
    }

    public function header(string $name): ?string
    {
        foreach ($this->headers as $line) {
            if (stripos($line, "$name:") === 0) {
                return trim(substr($line, strlen($name) + 1));
            }
        }
        return null;
    }
}

function form_key(string $html, string $what): string
{
    if (!preg_match('/name="form_key" value="([0-9a-f]+)"/', $html, $m)) {
        fail("$what: no form_key on the page");
    }
    return $m[1];
}

function expect_status(int $got, int $want, string $what, string $body = ''): void
{
    if ($got !== $want) {
        fail("$what: expected $want, got $got: " . substr($body, 0, 300));
    }
}

function dance(string $base, string $key, string $secret, string $user, array $login, ?string $adminPath = null): void
{
    $oauth = new OAuth($key, $secret, OAUTH_SIG_METHOD_HMACSHA1, OAUTH_AUTH_TYPE_AUTHORIZATION);
    // As the original's documentation wrote it: the callback in the initiate URL's query.
    $request = $oauth->getRequestToken("$base/oauth/initiate?oauth_callback=" . urlencode(CALLBACK));
    if (($request['oauth_callback_confirmed'] ?? '') !== 'true') {
        fail('initiate: no oauth_callback_confirmed');
    }
    $token = $request['oauth_token'];
    $path = $user === 'admin' ? ($adminPath ?? '/admin/oauth_authorize') : '/oauth/authorize';

    $browser = new Browser();
    $page = $browser->request('GET', "$base$path?oauth_token=" . urlencode($token));
    expect_status($browser->status, 200, 'authorize page', $page);
    $formKey = form_key($page, 'authorize page');
    $page = $browser->request('POST', "$base$path", ['oauth_token' => $token, 'form_key' => $formKey] + $login);
    expect_status($browser->status, 200, 'sign-in', $page);
    $formKey = form_key($page, 'confirm page');
    $browser->request('POST', "$base$path/confirm", ['oauth_token' => $token, 'form_key' => $formKey]);
    expect_status($browser->status, 302, 'authorize');
    $location = $browser->header('Location') ?? '';
    if (strpos($location, CALLBACK . '?') !== 0) {
        fail("authorize: redirected to $location");
    }
    parse_str((string) parse_url($location, PHP_URL_QUERY), $query);

    $oauth->setToken($token, $request['oauth_token_secret']);
    $access = $oauth->getAccessToken("$base/oauth/token", null, $query['oauth_verifier']);
    echo json_encode(['token' => $access['oauth_token'], 'secret' => $access['oauth_token_secret']]), "\n";
}

/** A signed call; [status, body]. The extension throws on non-2xx; that is an answer too. */
function call(OAuth $oauth, string $url, string $method = OAUTH_HTTP_METHOD_GET, ?string $body = null): array
{
    $headers = ['Accept' => 'application/json'];
    if ($body !== null) {
        $headers['Content-Type'] = 'application/json';
    }
    try {
        $oauth->fetch($url, $body ?? [], $method, $headers);
    } catch (OAuthException $e) {
        // The status and body are on the client either way.
    }
    $info = $oauth->getLastResponseInfo();
    return [(int) ($info['http_code'] ?? 0), (string) $oauth->getLastResponse()];
}

// A call that must answer `$want` (else a failure naming `$what`); its body.
function expect_call(OAuth $oauth, string $url, int $want, string $what, string $method = OAUTH_HTTP_METHOD_GET, ?string $body = null): string
{
    [$status, $answer] = call($oauth, $url, $method, $body);
    expect_status($status, $want, $what, $answer);
    return $answer;
}

function client(string $key, string $secret, string $token, string $tokenSecret, string $method = OAUTH_SIG_METHOD_HMACSHA1): OAuth
{
    $oauth = new OAuth($key, $secret, $method, OAUTH_AUTH_TYPE_AUTHORIZATION);
    $oauth->setToken($token, $tokenSecret);
    return $oauth;
}

function expect_problem(array $answer, string $name, string $what): void
{
    [$status, $body] = $answer;
    expect_status($status, 401, $what, $body);
    $message = json_decode($body, true)['messages']['error'][0]['message'] ?? null;
    if ($message !== "oauth_problem=$name") {
        fail("$what: expected oauth_problem=$name, got " . substr($body, 0, 200));
    }
}

function calls(string $base, string $key, string $secret, string $user, string $token, string $tokenSecret, ?string $customerId): void
{
    $rest = "$base/api/rest";
    $oauth = client($key, $secret, $token, $tokenSecret);
    if ($user === 'customer') {
        expect_call($oauth, "$rest/customers/$customerId", 200, 'own record');
        expect_call($oauth, "$rest/stockitems", 403, 'stock items as a customer');
        expect_call($oauth, "$rest/customers/$customerId", 200, 'update own record', OAUTH_HTTP_METHOD_PUT, json_encode(['lastname' => 'Pecl']));
        [$status, $body] = call($oauth, "$rest/customers/$customerId");
        if ((json_decode($body, true)['lastname'] ?? null) !== 'Pecl') {
            fail('write not seen: ' . substr($body, 0, 200));
        }
    } else {
        expect_call($oauth, "$rest/stockitems", 200, 'stock items as admin');
        expect_call($oauth, "$rest/products/1", 200, 'update a product', OAUTH_HTTP_METHOD_PUT, json_encode(['name' => 'Signed by pecl oauth']));
        [$status, $body] = call($oauth, "$rest/products/1?filter=a%20b");
        if ((json_decode($body, true)['name'] ?? null) !== 'Signed by pecl oauth') {
            fail('write not seen: ' . substr($body, 0, 200));
        }
    }
    // Brackets in filter keys, which clients of the original had to sign with care.
    $body = expect_call($oauth, "$rest/products?filter[1][attribute]=name&filter[1][like]=%25Bag%25&limit=2", 200, 'filtered list');
    if (count(json_decode($body, true) ?? []) < 1) {
        fail('filtered list: empty');
    }
    [$status, $body] = call(client($key, $secret, $token, $tokenSecret, OAUTH_SIG_METHOD_PLAINTEXT), "$rest/products");
    expect_status($status, 200, 'PLAINTEXT', $body);

    // Signed in the query string (OAUTH_AUTH_TYPE_URI): served as the signer, not as Guest
    // (the original's Guest answer: 403 for stock items, a customer's record refused).
    $uri = client($key, $secret, $token, $tokenSecret);
    $uri->setAuthType(OAUTH_AUTH_TYPE_URI);
    $signed = $user === 'customer' ? "$rest/customers/$customerId" : "$rest/stockitems";
    [$status, $body] = call($uri, $signed);
    expect_status($status, 200, 'signed in the query string', $body);
    $forged = client($key, str_repeat('f', 32), $token, $tokenSecret);
    $forged->setAuthType(OAUTH_AUTH_TYPE_URI);
    expect_problem(call($forged, "$rest/products"), 'signature_invalid', 'forged signature in the query');

    // A forged signature.
    expect_problem(call(client($key, str_repeat('f', 32), $token, $tokenSecret), "$rest/products"), 'signature_invalid', 'forged signature');
    // A replay: the same nonce and timestamp twice.
    $replay = client($key, $secret, $token, $tokenSecret);
    $replay->setNonce(bin2hex(random_bytes(8)));
    $replay->setTimestamp((string) time());
    [$status, $body] = call($replay, "$rest/products");
    expect_status($status, 200, 'first send', $body);
    expect_problem(call($replay, "$rest/products"), 'nonce_used', 'replayed request');
    // A timestamp three hours old.
    $old = client($key, $secret, $token, $tokenSecret);
    $old->setTimestamp((string) (time() - 3 * 3600));
    expect_problem(call($old, "$rest/products"), 'timestamp_refused', 'expired timestamp');
    echo "ok\n";
}

/**
 * The call the official examples make, in our words: pecl OAuth with HMAC-SHA1 in the
 * Authorization header, a GET with only a JSON Content-Type header (plus `Accept` when the
 * example names one), and the answer printed with print_r(json_decode(...)).
 */
function official(string $base, string $key, string $secret, string $token, string $tokenSecret, string $resource, ?string $accept): void
{
    $client = new OAuth($key, $secret, OAUTH_SIG_METHOD_HMACSHA1, OAUTH_AUTH_TYPE_AUTHORIZATION);
    $client->enableDebug();
    $client->setToken($token, $tokenSecret);
    $headers = ['Content-Type' => 'application/json'];
    if ($accept !== null) {
        $headers['Accept'] = $accept;
    }
    $client->fetch("$base/api/rest/$resource", [], OAUTH_HTTP_METHOD_GET, $headers);
    print_r(json_decode($client->getLastResponse()));
    $info = $client->getLastResponseInfo();
    echo "\ncontent-type: ", $info['content_type'] ?? '', "\n";
}

/** Zend_Oauth_Http_Utility::urlEncode: RFC 3986 encoding, `~` kept. */
function zf1_encode(string $value): string
{
    return str_replace('%7E', '~', rawurlencode($value));
}

/**
 * The signature base string as Zend Framework 1 built it (Zend_Oauth_Signature_
 * SignatureAbstract): names and values encoded, the names sorted with $compare (ZF1:
 * strnatcmp), joined, encoded again.
 */
function zf1_base(string $method, string $url, array $params, callable $compare): string
{
    $encoded = [];
    foreach ($params as $name => $value) {
        $encoded[zf1_encode((string) $name)] = zf1_encode((string) $value);
    }
    uksort($encoded, $compare);
    $pairs = [];
    foreach ($encoded as $name => $value) {
        $pairs[] = "$name=$value";
    }
    $parts = parse_url($url);
    $port = isset($parts['port']) ? ':' . $parts['port'] : '';
    $normalised = strtolower($parts['scheme']) . '://' . strtolower($parts['host']) . $port . $parts['path'];
    return strtoupper($method) . '&' . zf1_encode($normalised) . '&' . zf1_encode(implode('&', $pairs));
}

/** A GET signed the ZF1 way in the Authorization header; [status, body]. */
function zf1_get(string $url, array $protocol, string $consumerSecret, string $tokenSecret): array
{
    $params = $protocol;
    foreach (explode('&', (string) parse_url($url, PHP_URL_QUERY)) as $pair) {
        [$name, $value] = array_pad(explode('=', $pair, 2), 2, '');
        $params[rawurldecode($name)] = rawurldecode($value);
    }
    $base = zf1_base('GET', $url, $params, 'strnatcmp');
    $protocol['oauth_signature'] = base64_encode(hash_hmac('sha1', $base, zf1_encode($consumerSecret) . '&' . zf1_encode($tokenSecret), true));
    $items = [];
    foreach ($protocol as $name => $value) {
        $items[] = zf1_encode($name) . '="' . zf1_encode($value) . '"';
    }
    $context = stream_context_create(['http' => [
        'method' => 'GET',
        'ignore_errors' => true,
        'header' => "Authorization: OAuth " . implode(', ', $items) . "\r\nAccept: application/json",
    ]]);
    $body = file_get_contents($url, false, $context);
    preg_match('#^HTTP/\S+ (\d+)#', $http_response_header[0] ?? '', $m);
    return [(int) ($m[1] ?? 0), $body === false ? '' : $body];
}

function natural(string $base, string $key, string $secret, string $token, string $tokenSecret): void
{
    $url = "$base/api/rest/products?filter[2][attribute]=sku&filter[2][like]=24-MB0%25"
        . "&filter[10][attribute]=name&filter[10][like]=%25Bag%25&limit=20";
    $protocol = fn (string $nonce, int $time) => [
        'oauth_consumer_key' => $key,
        'oauth_nonce' => $nonce,
        'oauth_signature_method' => 'HMAC-SHA1',
        'oauth_timestamp' => (string) $time,
        'oauth_token' => $token,
        'oauth_version' => '1.0',
    ];
    // The two orders must differ for these names as encoded (filter%5B2%5D before
    // filter%5B10%5D naturally, after it by byte value), or this proves nothing.
    $names = ['filter[2][attribute]' => 'x', 'filter[10][attribute]' => 'y'];
    if (zf1_base('GET', $url, $names, 'strnatcmp') === zf1_base('GET', $url, $names, 'strcmp')) {
        fail('natural: the two orders do not differ for filter[2] and filter[10]');
    }
    $first = $protocol(bin2hex(random_bytes(8)), time());
    [$status, $body] = zf1_get($url, $first, $secret, $tokenSecret);
    expect_status($status, 200, 'natural-order signed list', $body);
    $list = json_decode($body, true) ?? [];
    $skus = array_map(fn ($p) => $p['sku'] ?? '', array_values($list));
    sort($skus);
    // Both filters applied, as the Admin (the Admin's list view carries `visibility`).
    if ($skus !== ['24-MB01', '24-MB05']
        || !array_key_exists('visibility', array_values($list)[0])) {
        fail('natural-order signed list: not the Admin\'s filtered list: ' . substr($body, 0, 300));
    }
    // The same request again: its nonce is spent, whichever order verified it.
    [$status, $body] = zf1_get($url, $first, $secret, $tokenSecret);
    expect_problem([$status, $body], 'nonce_used', 'natural-order replay');
    [$status, $body] = zf1_get($url, $protocol(bin2hex(random_bytes(8)), time()), str_repeat('f', 32), $tokenSecret);
    expect_problem([$status, $body], 'signature_invalid', 'natural-order forged signature');
    [$status, $body] = zf1_get($url, $protocol(bin2hex(random_bytes(8)), time() - 3 * 3600), $secret, $tokenSecret);
    expect_problem([$status, $body], 'timestamp_refused', 'natural-order stale timestamp');
    // pecl oauth signs the same URL in byte order: served too.
    [$status, $body] = call(client($key, $secret, $token, $tokenSecret), $url);
    expect_status($status, 200, 'byte-order signed list', $body);
    if (count(json_decode($body, true) ?? []) !== 2) {
        fail('byte-order signed list: ' . substr($body, 0, 300));
    }
    echo "ok\n";
}

[$script, $mode, $base, $key, $secret] = array_pad($argv, 5, '');
switch ($mode) {
    case 'dance':
        $user = $argv[5] ?? 'customer';
        $login = $user === 'admin'
            ? ['login[username]' => 'operator', 'login[password]' => $argv[6] ?? '']
            : ['login[username]' => $argv[6] ?? '', 'login[password]' => $argv[7] ?? ''];
        dance($base, $key, $secret, $user, $login, $user === 'admin' ? ($argv[7] ?? null) : null);
        break;
    case 'official':
        official($base, $key, $secret, $argv[5] ?? '', $argv[6] ?? '', $argv[7] ?? 'products', $argv[8] ?? null);
        break;
    case 'calls':
        calls($base, $key, $secret, $argv[5] ?? '', $argv[6] ?? '', $argv[7] ?? '', $argv[8] ?? null);
        break;
    case 'natural':
        natural($base, $key, $secret, $argv[5] ?? '', $argv[6] ?? '');
        break;
    case 'rejected':
        expect_problem(call(client($key, $secret, $argv[5] ?? '', $argv[6] ?? ''), "$base/api/rest/products"), 'token_rejected', 'revoked token');
        echo "ok\n";
        break;
    default:
        fail("unknown mode $mode");
}
